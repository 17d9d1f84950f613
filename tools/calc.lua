-- Batching by the Numbers: "change the assumptions" panels (pandoc 2.17).
--
--   ```{.calc cmd="decode" model="llama3-70b" gpu="h100" tp="4" batch="64"
--            show="max_batch,step_time,tokens_per_s"}
--   ```
--
-- becomes a form (one field per flag attribute, with that default; models
-- and GPUs as selects from the built-in tables, numbers as inputs with their
-- valid ranges) over a result table.  The table printed into the page is the
-- default answer, computed here by running the napkin CLI, so a reader
-- without scripts (or the PDF) sees numbers; the page's script
-- (code/web/calc.js) recomputes it in the browser with the same C code
-- compiled to WebAssembly whenever a field changes.
--
-- Attributes: cmd (required), show (comma-separated report keys to show;
-- default all), and any flag of `napkin <cmd>` without its dashes.  Rows
-- show the CLI's own label and formatted value (--format table) and keep the
-- raw SI number (--format tsv) in data-value.  A default that the CLI
-- refuses fails the build.
--
-- Environment: NB_BIN (the napkin binary's folder), NB_SRC (the tables).

local BIN = os.getenv("NB_BIN") or "build/bin"
local SRC = os.getenv("NB_SRC") or "."
local NAPKIN = BIN .. "/napkin"
local FILE = (PANDOC_STATE.input_files[1] or "input"):gsub("^.*/", ""):gsub("%.md$", "")

local function fail(msg)
  io.stderr:write(FILE .. ".md: calc cell: " .. msg .. "\n")
  os.exit(1)
end

local function shell_quote(s)
  return "'" .. s:gsub("'", "'\\''") .. "'"
end

-- Runs napkin; returns stdout, exit status, stderr.
local function napkin(args)
  local errfile = os.tmpname()
  local cmd = shell_quote(NAPKIN)
  for _, a in ipairs(args) do cmd = cmd .. " " .. shell_quote(a) end
  local p = io.popen(cmd .. " 2>" .. shell_quote(errfile), "r")
  local out = p:read("a")
  local _, _, status = p:close()
  local f = io.open(errfile, "r")
  local err = f and f:read("a") or ""
  if f then f:close() end
  os.remove(errfile)
  return out, status, err
end

local function lines(text)
  local t = {}
  for l in (text .. "\n"):gmatch("([^\n]*)\n") do t[#t + 1] = l end
  return t
end

-- The first column of a spec table: its keys, in order.
local function table_keys(file)
  local keys = {}
  local f = io.open(SRC .. "/code/specs/" .. file, "r")
  if not f then fail("cannot read code/specs/" .. file) end
  local header = true
  for l in f:lines() do
    if l:sub(1, 1) ~= "#" and l ~= "" then
      if header then header = false else keys[#keys + 1] = l:match("^([^\t]+)") end
    end
  end
  f:close()
  return keys
end

-- The dtype names, as the CLI lists them in its own error message.
local function dtype_names()
  local _, _, err = napkin({ "roofline", "--gpu", "h100", "--dtype", "?" })
  local list = err:match("%(choices: ([^)]*)%)")
  if not list then fail("cannot read the dtype choices from napkin: " .. err) end
  local names = {}
  for n in list:gmatch("[^, ]+") do names[#names + 1] = n end
  return names
end

-- The model table each command reads (the rest read models.tsv).
local MODEL_TABLE = { image = "vision_models.tsv", video = "video_models.tsv" }

local choices_cache = {}
local function choices(kind, cmd)
  if kind == "models" then kind = MODEL_TABLE[cmd] or "models.tsv" end
  if type(kind) == "table" then return kind end
  if not choices_cache[kind] then
    if kind == "gpus" then choices_cache[kind] = table_keys("gpus.tsv")
    elseif kind == "dtypes" then choices_cache[kind] = dtype_names()
    else choices_cache[kind] = table_keys(kind) end
  end
  return choices_cache[kind]
end

-- How each flag is asked for.  Numbers: {min, max, step}, the range a reader
-- is offered (the CLI itself checks the value).
local FIELDS = {
  model = { select = "models" }, draft = { select = "models" }, gpu = { select = "gpus" },
  dtype = { select = "dtypes" }, weights = { select = "dtypes" }, kv = { select = "dtypes" },
  act = { select = "dtypes" }, compute = { select = "dtypes" },
  ["draft-gpus"] = { select = { "shared", "own" } },
  ["no-comm"] = { flag = true }, roofline = { flag = true },
  tp = { num = { 1, 16, 1 } }, ["draft-tp"] = { num = { 1, 16, 1 } },
  batch = { num = { 1, 4096, 1 } }, ["batch-max"] = { num = { 1, 4096, 1 } },
  context = { num = { 1, 131072, 1 } },
  gamma = { num = { 1, 16, 1 } }, alpha = { num = { 0.01, 1, 0.01 } },
  c = { num = { 0.001, 1, 0.001 } }, usable = { num = { 0.05, 1, 0.01 } },
  ["activation-tokens"] = { num = { 0, 65536, 1 } }, ["sampled-tokens"] = { num = { 0, 8192, 1 } },
  -- lora
  rank = { num = { 1, 256, 1 } }, ["max-rank"] = { num = { 1, 256, 1 } },
  adapters = { num = { 1, 100000, 1 } }, slots = { num = { 1, 256, 1 } }, distinct = { num = { 1, 256, 1 } },
  ["adapter-dtype"] = { select = "dtypes" }, ["launch-us"] = { num = { 0, 50, 0.1 } },
  -- image
  width = { num = { 1, 8192, 1 } }, height = { num = { 1, 8192, 1 } }, images = { num = { 1, 64, 1 } },
  ["text-tokens"] = { num = { 0, 131072, 1 } }, ["output-tokens"] = { num = { 0, 32768, 1 } },
  budget = { num = { 1, 65536, 1 } }, ["ttft-target"] = { num = { 0.01, 60, 0.01 } },
  ["encoder-efficiency"] = { num = { 0.001, 1, 0.001 } }, ["lm-efficiency"] = { num = { 0.001, 1, 0.001 } },
  -- graphs
  ["new-tokens"] = { num = { 1, 16, 1 } }, ["graph-launch-us"] = { num = { 0, 50, 0.1 } },
  ["node-us"] = { num = { 0, 10, 0.1 } }, ["step-host-us"] = { num = { 0, 10000, 0.1 } }, ["capture-max"] = { num = { 1, 4096, 1 } },
  fusion = { select = { "none", "norm-residual", "gate-act", "all" } },
  -- video
  frames = { num = { 1, 481, 4 } }, steps = { num = { 1, 200, 1 } }, gpus = { num = { 1, 64, 1 } },
  efficiency = { num = { 0.01, 1, 0.01 } },
  -- train
  seq = { num = { 1, 131072, 1 } }, ["micro-batch"] = { num = { 1, 64, 1 } },
  pp = { num = { 1, 64, 1 } }, dp = { num = { 1, 1024, 1 } }, sp = { flag = true },
  zero = { select = { "0", "1", "2", "3" } }, recompute = { select = { "none", "selective", "full" } },
  -- ep
  ep = { num = { 1, 256, 1 } }, imbalance = { num = { 1, 4, 0.05 } }, ["net-gb-s"] = { num = { 1, 1000, 1 } },
  ["grad-dtype"] = { select = { "bf16", "fp32" } }, ["master-dtype"] = { select = { "fp32", "bf16" } },
}

-- Where a command gives a flag another range.
local FIELDS_BY_CMD = {
  video = { width = { num = { 16, 4096, 16 } }, height = { num = { 16, 4096, 16 } }, gpus = { num = { 1, 8, 1 } } },
}

local function esc(s)
  return (s:gsub("&", "&amp;"):gsub("<", "&lt;"):gsub(">", "&gt;"):gsub('"', "&quot;"))
end

local function field_html(cmd, name, default)
  local spec = (FIELDS_BY_CMD[cmd] or {})[name] or FIELDS[name]
  if not spec then fail("no field kind for flag --" .. name .. " (add it to FIELDS in tools/calc.lua)") end
  local h = '<label class="calc-field"><span class="calc-name">' .. esc(name) .. "</span> "
  if spec.select then
    local opts, found = {}, false
    for _, c in ipairs(choices(spec.select, cmd)) do
      local sel = c == default and " selected" or ""
      found = found or c == default
      opts[#opts + 1] = '<option value="' .. esc(c) .. '"' .. sel .. ">" .. esc(c) .. "</option>"
    end
    if not found then fail("--" .. name .. " default '" .. default .. "' is not one of the choices") end
    h = h .. '<select name="' .. esc(name) .. '">' .. table.concat(opts) .. "</select>"
  elseif spec.flag then
    local on = (default == "true" or default == "1") and " checked" or ""
    h = h .. '<input type="checkbox" name="' .. esc(name) .. '"' .. on .. ">"
  else
    local r = spec.num
    h = h .. string.format('<input type="number" name="%s" min="%s" max="%s" step="%s" value="%s">',
      esc(name), r[1], r[2], r[3], esc(default))
  end
  return h .. '</label><span class="calc-err" data-for="' .. esc(name) .. '"></span>'
end

-- The CLI's argv for the cell's defaults (flags in the cell's order).
local function cli_args(cmd, fields)
  local args = { cmd }
  for _, f in ipairs(fields) do
    local spec = FIELDS[f[1]]
    if spec and spec.flag then
      if f[2] == "true" or f[2] == "1" then args[#args + 1] = "--" .. f[1] end
    else
      args[#args + 1] = "--" .. f[1]
      args[#args + 1] = f[2]
    end
  end
  return args
end

-- values (ordered {key, value, unit}) and notes from --format tsv.
local function parse_tsv(text)
  local values, notes, header_seen = {}, {}, false
  for _, l in ipairs(lines(text)) do
    if l:sub(1, 2) == "# " then notes[#notes + 1] = l:sub(3)
    elseif l == "" then if header_seen then break end
    elseif not header_seen then header_seen = (l == "name\tvalue\tunit")
    else
      local k, v, u = l:match("^([^\t]*)\t([^\t]*)\t([^\t]*)$")
      if not k then fail("unexpected tsv line from napkin: " .. l) end
      -- a band's numbers (<row>_band_lo, _hi, _n) are for scripts: the table
      -- prints the band beside its row, not on lines of its own
      if not (k:match("_band_lo$") or k:match("_band_hi$") or k:match("_band_n$")) then
        values[#values + 1] = { k, v, u }
      end
    end
  end
  return values, notes
end

-- The kind of number a section holds, from its title ("Bound: ...",
-- "Estimate: ..."; code/web/calc.js reads it alike), or nil.
local function section_kind(title)
  local k = title:match("^(Bound): ") or title:match("^(Estimate): ")
  if not k then return nil end
  return k:lower() .. (title:match("at the given efficiencies%)$") and " at the given efficiencies" or "")
end

-- {label, shown} of each value, from --format table: its first field lines;
-- a label ends with its section's kind, "(bound)" or "(estimate)".
local function parse_table(text, n)
  local rows, kind = {}, nil
  for _, l in ipairs(lines(text)) do
    if #rows == n then break end
    if l:sub(1, 2) == "  " then
      local label, shown = l:match("^  (.-)  +(.*)$")
      if not label then fail("unexpected table line from napkin: " .. l) end
      if kind then label = label .. " (" .. kind .. ")" end
      rows[#rows + 1] = { label, shown }
    elseif l ~= "" then
      kind = section_kind(l)
    end
  end
  if #rows ~= n then fail("napkin's table has " .. #rows .. " value lines, its tsv " .. n) end
  return rows
end

-- A calibrated value's measured band follows it after ", " ("26.6 ms, runs
-- like this one: ..."): a span of its own, which may wrap where the value
-- may not (code/web/calc.js splits it alike).
local function value_inlines(shown)
  local head, aside = shown:match("^(.-,) (runs like this one.*)$")
  if not head then head, aside = shown:match("^(.-,) (no measured run.*)$") end
  if not head then return { pandoc.Str(shown) } end
  return { pandoc.Str(head), pandoc.Space(), pandoc.Span({ pandoc.Str(aside) }, pandoc.Attr("", { "calc-aside" })) }
end

local counter = 0

local function calc_cell(block)
  local cmd = block.attributes.cmd
  if not cmd or cmd == "" then fail("a .calc cell needs cmd=\"<napkin command>\"") end
  local show = block.attributes.show
  local fields = {}
  for _, kv in ipairs(block.attributes) do
    if kv[1] ~= "cmd" and kv[1] ~= "show" then fields[#fields + 1] = { kv[1], kv[2] } end
  end
  local args = cli_args(cmd, fields)
  local function run(format)
    local a = { table.unpack(args) }
    a[#a + 1] = "--format"
    a[#a + 1] = format
    local out, status, err = napkin(a)
    if status ~= 0 then
      fail("napkin " .. table.concat(args, " ") .. " exits " .. tostring(status) .. ": " .. err)
    end
    return out
  end
  local values, notes = parse_tsv(run("tsv"))
  local shown = parse_table(run("table"), #values)
  local wanted = nil
  if show then
    wanted = {}
    for k in show:gmatch("[^,%s]+") do wanted[k] = true end
    for k in pairs(wanted) do
      local known = false
      for _, v in ipairs(values) do known = known or v[1] == k end
      if not known then fail("show= names '" .. k .. "', which napkin " .. cmd .. " does not report") end
    end
  end

  local rows = {}
  for i, v in ipairs(values) do
    if not wanted or wanted[v[1]] then
      local value = pandoc.Span(value_inlines(shown[i][2]),
        pandoc.Attr("", { "v" }, { { "data-key", v[1] }, { "data-value", v[2] } }))
      rows[#rows + 1] = { { pandoc.Plain({ pandoc.Str(shown[i][1]) }) }, { pandoc.Plain({ value }) } }
    end
  end
  local simple = pandoc.SimpleTable({}, { pandoc.AlignLeft, pandoc.AlignRight }, { 0, 0 },
    { { pandoc.Plain({ pandoc.Str("quantity") }) }, { pandoc.Plain({ pandoc.Str("value") }) } }, rows)

  local form = { '<form class="calc-form" autocomplete="off" onsubmit="return false">' }
  for _, f in ipairs(fields) do form[#form + 1] = field_html(cmd, f[1], f[2]) end
  form[#form + 1] = "</form>"

  local note_blocks = {}
  for _, n in ipairs(notes) do note_blocks[#note_blocks + 1] = pandoc.Plain({ pandoc.Str(n) }) end

  counter = counter + 1
  local id = "calc-" .. FILE:match("^(%d+)") .. "-" .. cmd .. "-" .. counter
  local attrs = { { "data-cmd", cmd } }
  if show then attrs[#attrs + 1] = { "data-show", show } end
  return pandoc.Div({
    pandoc.RawBlock("html", table.concat(form, "\n")),
    pandoc.Div({ pandoc.Para({ pandoc.Code("napkin " .. table.concat(args, " ")) }) },
      pandoc.Attr("", { "calc-command" })),
    pandoc.Div({}, pandoc.Attr("", { "calc-status" })),
    pandoc.utils.from_simple_table(simple),
    pandoc.Div(note_blocks, pandoc.Attr("", { "calc-notes" })),
  }, pandoc.Attr(id, { "calc" }, attrs))
end

return { { CodeBlock = function(block)
  for _, c in ipairs(block.classes) do
    if c == "calc" then return calc_cell(block) end
  end
  return nil
end } }
