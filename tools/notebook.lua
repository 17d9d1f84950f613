--[[ The notebook engine: a pandoc (2.17) Lua filter that expands one chapter,
exercise set or solution set of the book.

  pandoc -f markdown -t markdown --lua-filter tools/notebook.lua chapters/01-x.md

Cells (README "Notebook cells" is the author's guide):
  excerpt   ```{.c snippet="ridge"}```   found by name in code/, kernels/,
                                        solutions/, figures/ (names are unique)
  run       ```{.c .run}```        a whole C program, compiled and run
  console   ```{.console .run}```  lines "$ napkin ..." run and shown
  folds     an excerpt or an output of more than NB_FOLD_LINES lines (15)
            sits behind "show the code" / "show the output" in HTML
            (<details>); fold="open" on the cell never folds it,
            fold="closed" always does; other formats show it open
  values    {{name}} in prose, math, inline code, captions, tables
  figures   ![Caption](figures/NN-name.gp) -> NB_BUILD/figures/NN-name,
            numbered "Figure N.M"; the assembling pandoc adds .svg or .pdf
  numbers   tables "Table N.M" (anchor table-N-M), figures without a label
            get the anchor figure-N-M, problems "**3. Title.**" in exercise
            and solution sets become "Exercise N.3" (anchor exercise-N-3)
            and "Solution N.3" (anchor solution-N-3, linking the problem)
  citations [@key] must name an entry of NB_BIBLIOGRAPHY (BibTeX); the
            assembling pandoc's --citeproc formats them

Environment (set by the Makefile): NB_BUILD, NB_CC, NB_CFLAGS, NB_LIB,
NB_LDLIBS, NB_BIN, NB_VALUE_FILES, NB_FIGURE_EXT (which rendering must
exist: svg, the default, or pdf), NB_TIMEOUT (seconds per cell, default 30).

Every failure stops pandoc with "file:line: message" on stderr and exit 1.
pandoc 2.17 gives no source positions, so the line is found by searching the
source text for the cell's attributes, its code or the {{name}} token. ]]

local env = function(name, default)
  local v = os.getenv(name)
  if v == nil or v == "" then return default end
  return v
end

local INPUT = (PANDOC_STATE.input_files or {})[1] or "-"
local BUILD = env("NB_BUILD", "build")
local CC = env("NB_CC", "cc")
local CFLAGS = env("NB_CFLAGS", "")
local LIB = env("NB_LIB", BUILD .. "/lib/libnapkin.a")
local LDLIBS = env("NB_LDLIBS", "-lm")
local BIN = env("NB_BIN", BUILD .. "/bin")
local VALUE_FILES = env("NB_VALUE_FILES", "")
local FIGURE_EXT = env("NB_FIGURE_EXT", "svg")
local TIMEOUT = env("NB_TIMEOUT", "30")
local FOLD_LINES = tonumber(env("NB_FOLD_LINES", "15"))
-- Every cell runs under tools/run_bounded.sh (beside this filter): its own
-- process group, TERM then KILL past the limit, and no child left behind.
local BOUNDED = (PANDOC_SCRIPT_FILE and PANDOC_SCRIPT_FILE:match("^(.*)/[^/]*$") or "tools") .. "/run_bounded.sh"

-- chapters/01-roofline.md -> part "chapters", number 1, tag "01"
local PART = INPUT:match("([%w_]+)/[^/]*$") or ""
local TAG = INPUT:match("(%d%d)%-[^/]*$")
local CHAPTER = TAG and tonumber(TAG)

---------------------------------------------------------------- utilities

local function read_file(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local function write_file(path, text)
  local f = assert(io.open(path, "wb"))
  f:write(text)
  f:close()
end

local function exists(path)
  local f = io.open(path, "rb")
  if f then f:close() return true end
  return false
end

local SOURCE = read_file(INPUT) or ""

local function fail(line, msg)
  io.stderr:write(INPUT .. ":" .. tostring(line or "?") .. ": " .. msg .. "\n")
  os.exit(1)
end

local function line_of(pos)
  local n = 1
  for _ in SOURCE:sub(1, pos - 1):gmatch("\n") do n = n + 1 end
  return n
end

-- Line of the first plain occurrence of any needle, or "?".
local function find_line(...)
  for _, needle in ipairs({ ... }) do
    if needle and needle ~= "" then
      local p = SOURCE:find(needle, 1, true)
      if p then return line_of(p) end
    end
  end
  return "?"
end

local function escape_pattern(s)
  return (s:gsub("[%^%$%(%)%%%.%[%]%*%+%-%?]", "%%%0"))
end

-- Line of the first `key=value` attribute (quoted or not) in the source.
local function attr_line(key, value)
  local pat = key .. "%s*=%s*[\"']?" .. escape_pattern(value) .. "[\"'%s}]"
  local p = SOURCE:find(pat)
  if p then return line_of(p) end
  return nil
end

-- Line of a code block's opening fence: its text sits just below.
local function fence_line(block)
  local text = block.text
  if text ~= "" then
    local p = SOURCE:find(text, 1, true)
    if p then return line_of(p) - 1 end
    local first = text:match("^[^\n]*")
    p = SOURCE:find(first, 1, true)
    if p then return line_of(p) - 1 end
  end
  return "?"
end

local function shell_quote(s)
  return "'" .. s:gsub("'", "'\\''") .. "'"
end

-- Run a shell command; returns the exit status (128+n for signal n).
local function sh(cmd)
  local ok, how, code = os.execute(cmd)
  if ok then return 0 end
  if how == "signal" then return 128 + (code or 0) end
  return code or 1
end

local CWD = pandoc.system.get_working_directory()
local function absolute(path)
  if path:sub(1, 1) == "/" then return path end
  return CWD .. "/" .. path
end

local function has_class(el, class)
  for _, c in ipairs(el.classes) do
    if c == class then return true end
  end
  return false
end

local function last_lines(text, n)
  local lines = {}
  for l in (text .. "\n"):gmatch("([^\n]*)\n") do lines[#lines + 1] = l end
  while #lines > 0 and lines[#lines] == "" do lines[#lines] = nil end
  local from = math.max(1, #lines - n + 1)
  return table.concat(lines, "\n", from)
end

-- A name for temporary files that no other pandoc process uses at once.
local function unique_suffix()
  local t = os.tmpname()
  os.remove(t)
  return (t:match("([^/]+)$") or tostring(os.time())):gsub("[^%w]", "")
end

local CELL_DIR = BUILD .. "/cells"
local DATA_DIR = BUILD .. "/data"
local made_dirs = false
local function make_dirs()
  if not made_dirs then
    sh("mkdir -p " .. shell_quote(CELL_DIR) .. " " .. shell_quote(DATA_DIR))
    made_dirs = true
  end
end

---------------------------------------------------------------- values

local values = {}       -- name -> value
local value_from = {}   -- name -> where it was recorded

local function add_values(text, origin, line_hint)
  local n = 0
  for line in (text .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1
    if line ~= "" then
      local name, value = line:match("^([^\t]+)\t(.*)$")
      if not name then
        fail(line_hint, origin .. ":" .. n .. ": malformed value line (want name<TAB>value): " .. line)
      end
      if values[name] ~= nil and values[name] ~= value then
        fail(line_hint, "value '" .. name .. "' defined twice with different values: '"
          .. values[name] .. "' (" .. value_from[name] .. ") and '" .. value .. "' (" .. origin .. ")")
      end
      values[name] = value
      value_from[name] = origin
    end
  end
end

for path in VALUE_FILES:gmatch("%S+") do
  local text = read_file(path)
  if not text then fail(1, "value file " .. path .. " not found (did its program run?)") end
  add_values(text, path, 1)
end

---------------------------------------------------------------- excerpts

-- Marker rule: a line containing "//> name" opens snippet `name`, a line
-- containing "//< name" closes it; anything may precede the marker on its
-- line (a comment leader such as "#" or "/*"), and the whole marker line is
-- left out of every excerpt.
-- ("///< doc" comments are not markers: the "//" must not follow a "/".)
local function marker(line)
  local at, _, kind, name = line:find("//([<>])%s*([%w_%.%-]+)")
  if at and at > 1 and line:sub(at - 1, at - 1) == "/" then return nil end
  return kind, name
end

local function dedent(lines)
  local indent
  for _, l in ipairs(lines) do
    if l:match("%S") then
      local lead = l:match("^[ \t]*")
      if indent == nil or #lead < #indent then indent = lead end
    end
  end
  indent = indent or ""
  local out = {}
  for i, l in ipairs(lines) do
    out[i] = l:sub(1, #indent) == indent and l:sub(#indent + 1) or l:gsub("^[ \t]+", "")
  end
  while #out > 0 and not out[1]:match("%S") do table.remove(out, 1) end
  while #out > 0 and not out[#out]:match("%S") do out[#out] = nil end
  return out
end

-- The lines of snippet `name` in the file at path (the index below found
-- it opened there).
local function excerpt(path, name, line)
  local text = read_file(path)
  if not text then fail(line, "file " .. path .. " not found (excerpt '" .. name .. "')") end
  local lines, state, opened_at = {}, "before", nil
  local n = 0
  for l in (text .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1
    l = l:gsub("\r$", "")
    local kind, mname = marker(l)
    if mname == name and kind == ">" then
      if state == "inside" then
        fail(line, "snippet '" .. name .. "' opened again at " .. path .. ":" .. n
          .. " before its close (opened at line " .. opened_at .. ")")
      elseif state == "after" then
        fail(line, "snippet '" .. name .. "' defined twice in " .. path
          .. " (lines " .. opened_at .. " and " .. n .. ")")
      end
      state, opened_at = "inside", n
    elseif mname == name and kind == "<" then
      if state ~= "inside" then
        fail(line, "snippet '" .. name .. "' closed at " .. path .. ":" .. n .. " without being opened")
      end
      state = "after"
    elseif state == "inside" and not kind then
      lines[#lines + 1] = l
    end
  end
  if state == "inside" then
    fail(line, "snippet '" .. name .. "' opened at " .. path .. ":" .. opened_at .. " is never closed")
  end
  lines = dedent(lines)
  if #lines == 0 then fail(line, "snippet '" .. name .. "' in " .. path .. " is empty") end
  return table.concat(lines, "\n")
end

-- Snippets are found by name alone, so a source file can move between the
-- library's folders without an edit to any chapter.  The index maps each
-- name to the files that open it, over the sources a chapter may quote.
local SNIPPET_ROOTS = "code kernels solutions figures"
local SNIPPET_WHERE = "code/, kernels/, solutions/ or figures/"
local snippet_index = nil
local function snippet_files(name)
  if not snippet_index then
    snippet_index = {}
    local p = io.popen("grep -rlE --include='*.c' --include='*.h' --include='*.cu' --include='*.cuh' --include='*.gp' '//[>]' "
      .. SNIPPET_ROOTS .. " 2>/dev/null | LC_ALL=C sort")
    for path in p:lines() do
      local seen = {}
      for l in ((read_file(path) or "") .. "\n"):gmatch("([^\n]*)\n") do
        local kind, mname = marker(l)
        if kind == ">" and not seen[mname] then
          seen[mname] = true
          local files = snippet_index[mname] or {}
          files[#files + 1] = path
          snippet_index[mname] = files
        end
      end
    end
    p:close()
  end
  return snippet_index[name] or {}
end

-- Folds.

-- A cell's fold attribute: "open", "closed" or none (fold when long).
local function fold_wish(block, line)
  local f = block.attributes.fold
  if f and f ~= "open" and f ~= "closed" then
    fail(line, "fold=\"" .. f .. "\": a cell's fold is \"open\" or \"closed\"")
  end
  return f
end

local function line_count(text)
  local _, n = text:gsub("\n", "")
  return n + 1
end

-- blocks behind a <details> whose summary says what opening it shows, when
-- the cell asks for it or `text` is longer than FOLD_LINES; raw HTML, so the
-- PDF (and any format but HTML) shows the blocks open.
local function folded(blocks, text, what, wish)
  local n = line_count(text)
  if wish == "open" or (wish ~= "closed" and n <= FOLD_LINES) then return blocks end
  local out = { pandoc.RawBlock("html", '<details class="fold"><summary>show the ' .. what .. " ("
    .. n .. " lines)</summary>") }
  for _, b in ipairs(blocks) do out[#out + 1] = b end
  out[#out + 1] = pandoc.RawBlock("html", "</details>")
  return out
end

local function excerpt_cell(block)
  local name = block.attributes.snippet
  local line = (name and attr_line("snippet", name)) or find_line(block.attributes.file)
  if block.attributes.file then
    fail(line, "an excerpt names its snippet alone (found by name in " .. SNIPPET_WHERE
      .. "): drop file=\"" .. block.attributes.file .. "\"")
  end
  if not name or name == "" then fail(line, "excerpt cell has no snippet name") end
  if block.text:match("%S") then
    fail(line, "excerpt cell must be empty: its text comes from snippet '" .. name .. "'")
  end
  local files = snippet_files(name)
  if #files == 0 then fail(line, "snippet '" .. name .. "' not found in " .. SNIPPET_WHERE) end
  if #files > 1 then
    fail(line, "snippet '" .. name .. "' is opened in more than one file: " .. table.concat(files, ", "))
  end
  local file = files[1]
  local code = excerpt(file, name, line)
  local wish = fold_wish(block, line)
  local attrs = {}
  for k, v in pairs(block.attributes) do
    if k ~= "snippet" and k ~= "fold" then attrs[k] = v end
  end
  local shown = pandoc.CodeBlock(code, pandoc.Attr(block.identifier, block.classes, attrs))
  local label = pandoc.Plain({ pandoc.Code(file) })
  return pandoc.Div(folded({ label, shown }, code, "code", wish), pandoc.Attr("", { "excerpt" }))
end

---------------------------------------------------------------- run cells

local memo = {}
local function file_hash(path)
  if memo[path] == nil then
    local s = read_file(path)
    memo[path] = s and pandoc.utils.sha1(s) or "missing"
  end
  return memo[path]
end

-- Headers change what a cell compiles to even when the library does not.
local function headers_hash()
  if memo.headers == nil then
    local p = io.popen("cat code/napkin/*/*.h exercises/*.h 2>/dev/null")
    memo.headers = pandoc.utils.sha1(p:read("a") or "")
    p:close()
  end
  return memo.headers
end

local function cell_paths(key)
  local base = CELL_DIR .. "/" .. key
  return { base = base, ok = base .. ".ok", out = base .. ".out", values = base .. ".values" }
end

-- Reuse a cell's earlier stdout and values, or nil.
local function cached(key)
  local p = cell_paths(key)
  if not exists(p.ok) then return nil end
  return read_file(p.out) or "", read_file(p.values) or ""
end

local function store(key, tmp_out, tmp_values)
  local p = cell_paths(key)
  os.rename(tmp_out, p.out)
  if exists(tmp_values) then os.rename(tmp_values, p.values) else write_file(p.values, "") end
  write_file(p.ok, "")
end

-- A failed cell leaves nothing behind: its output so far (however large),
-- its values, its binary and its source go before the build stops.
local function discard(...)
  for _, path in ipairs({ ... }) do os.remove(path) end
end

local function cap_message()
  return "wrote more than " .. (os.getenv("NB_OUTPUT_MAX") or tostring(16 * 1024 * 1024))
    .. " bytes of output (NB_OUTPUT_MAX): stopped"
end

-- nb_contain's exit status when a file the cell wrote reached NB_FILE_MAX.
local FILE_CAP_STATUS = 122
local function file_cap_message()
  return "wrote a file of " .. (os.getenv("NB_FILE_MAX") or tostring(64 * 1024 * 1024))
    .. " bytes, the most a cell may write (NB_FILE_MAX): stopped"
end

local function run_cell(block)
  local line = fence_line(block)
  local key = pandoc.utils.sha1(table.concat({ "run", CC, CFLAGS, LDLIBS, file_hash(LIB),
    headers_hash(), block.text }, "\0"))
  local out, vals = cached(key)
  if not out then
    make_dirs()
    local p = cell_paths(key)
    local tmp = p.base .. "." .. unique_suffix()
    local src, exe = p.base .. ".c", tmp .. ".bin"
    write_file(tmp .. ".c", block.text .. "\n")
    os.rename(tmp .. ".c", src)
    if not exists(LIB) then fail(line, "run cell needs " .. LIB .. " (build the library first)") end
    local rc = sh(CC .. " " .. CFLAGS .. " " .. shell_quote(src) .. " " .. shell_quote(LIB) .. " "
      .. LDLIBS .. " -o " .. shell_quote(exe) .. " 2> " .. shell_quote(tmp .. ".err"))
    if rc ~= 0 then
      local err = read_file(tmp .. ".err") or ""
      os.remove(tmp .. ".err")
      -- Point compiler messages at chapter lines: cell line k is fence + k.
      err = err:gsub(escape_pattern(src) .. ":(%d+)", function(k)
        return INPUT .. ":" .. (type(line) == "number" and (line + tonumber(k)) or ("cell line " .. k))
      end)
      err = err:gsub(escape_pattern(src), INPUT .. " (run cell)")
      discard(src, exe)
      fail(line, "run cell does not compile:\n" .. last_lines(err, 30))
    end
    os.remove(tmp .. ".err")
    rc = sh("NB_VALUES=" .. shell_quote(absolute(tmp .. ".values")) .. " NB_DATA="
      .. shell_quote(absolute(DATA_DIR)) .. " " .. shell_quote(absolute(BOUNDED)) .. " " .. shell_quote(TIMEOUT) .. " "
      .. shell_quote(exe) .. " > " .. shell_quote(tmp .. ".out") .. " 2> " .. shell_quote(tmp .. ".err")
      .. " < /dev/null")
    local err = read_file(tmp .. ".err") or ""
    os.remove(tmp .. ".err")
    os.remove(exe)
    if rc ~= 0 then discard(tmp .. ".out", tmp .. ".values", src) end
    if rc == 123 then
      fail(line, "run cell " .. cap_message())
    elseif rc == FILE_CAP_STATUS then
      fail(line, "run cell " .. file_cap_message())
    elseif rc == 124 or rc == 137 then
      fail(line, "run cell timed out after " .. TIMEOUT .. " s" .. (rc == 137 and " (and ignored TERM: killed)" or ""))
    elseif rc > 128 then
      fail(line, "run cell was killed by signal " .. (rc - 128) .. (err ~= "" and (":\n" .. last_lines(err, 20)) or ""))
    elseif rc ~= 0 then
      fail(line, "run cell exited with status " .. rc .. (err ~= "" and (":\n" .. last_lines(err, 20)) or ""))
    end
    store(key, tmp .. ".out", tmp .. ".values")
    out, vals = cached(key)
  end
  add_values(vals, "run cell at " .. INPUT .. ":" .. line, line)
  local blocks = { pandoc.CodeBlock(block.text, pandoc.Attr(block.identifier, { "c", "cell" })) }
  local shown = out:gsub("\n+$", "")
  if shown ~= "" then
    local output = folded({ pandoc.CodeBlock(shown, pandoc.Attr("", { "output" })) }, shown, "output",
      fold_wish(block, line))
    for _, b in ipairs(output) do blocks[#blocks + 1] = b end
  end
  return blocks
end

---------------------------------------------------------------- console cells

-- A command line ending in "# exit N" is expected to exit with status N (a
-- way to show the reader an error message); any other line must exit 0.
local function console_cell(block)
  local first = fence_line(block)
  local commands = {}
  local n = 0
  for l in (block.text .. "\n"):gmatch("([^\n]*)\n") do
    n = n + 1
    local here = type(first) == "number" and first + n or "?"
    if l:match("%S") then
      local cmd = l:match("^%$ (.+)$")
      if not cmd then fail(here, "console cell line does not start with '$ ': " .. l) end
      local program = cmd:match("^(%S+)")
      if program:find("..", 1, true) or program:sub(1, 1) == "/"
        or not exists(BIN .. "/" .. program) then
        fail(here, "console command '" .. program .. "' is not a program in " .. BIN)
      end
      local expect = tonumber(cmd:match("#%s*exit%s+(%d+)%s*$") or "0")
      commands[#commands + 1] = { cmd = cmd, program = program, expect = expect, line = here }
    end
  end
  if #commands == 0 then fail(first, "console cell has no '$ ' command") end
  local parts = { "console", block.text, file_hash(BIN .. "/napkin") }
  for _, c in ipairs(commands) do parts[#parts + 1] = file_hash(BIN .. "/" .. c.program) end
  local key = pandoc.utils.sha1(table.concat(parts, "\0"))
  local out, vals = cached(key)
  if not out then
    make_dirs()
    local p = cell_paths(key)
    local tmp = p.base .. "." .. unique_suffix()
    local transcript = {}
    for _, c in ipairs(commands) do
      -- The first word runs from NB_BIN even when it has a slash
      -- (ch01/table); later words find NB_BIN on PATH (pipes into napkin).
      local run = shell_quote(absolute(BIN .. "/" .. c.program)) .. c.cmd:sub(#c.program + 1)
      local rc = sh("PATH=" .. shell_quote(absolute(BIN)) .. ":\"$PATH\" NB_VALUES="
        .. shell_quote(absolute(tmp .. ".values")) .. " NB_DATA=" .. shell_quote(absolute(DATA_DIR))
        .. " " .. shell_quote(absolute(BOUNDED)) .. " " .. shell_quote(TIMEOUT) .. " sh -c " .. shell_quote(run)
        .. " > " .. shell_quote(tmp .. ".one") .. " 2>&1 < /dev/null")
      local text = (read_file(tmp .. ".one") or ""):gsub("\n+$", "")
      os.remove(tmp .. ".one")
      if rc ~= c.expect then discard(tmp .. ".values") end
      if rc == 123 then
        fail(c.line, "console command " .. cap_message() .. ": " .. c.cmd)
      elseif rc == FILE_CAP_STATUS and c.expect ~= FILE_CAP_STATUS then
        fail(c.line, "console command " .. file_cap_message() .. ": " .. c.cmd)
      elseif rc == 124 or rc == 137 then
        fail(c.line, "console command timed out after " .. TIMEOUT .. " s: " .. c.cmd)
      elseif rc ~= c.expect then
        fail(c.line, "console command exited with status " .. rc .. " (expected " .. c.expect .. "): "
          .. c.cmd .. (text ~= "" and (":\n" .. last_lines(text, 20)) or ""))
      end
      transcript[#transcript + 1] = "$ " .. c.cmd
      if text ~= "" then transcript[#transcript + 1] = text end
    end
    write_file(tmp .. ".out", table.concat(transcript, "\n"))
    store(key, tmp .. ".out", tmp .. ".values")
    out, vals = cached(key)
  end
  add_values(vals, "console cell at " .. INPUT .. ":" .. first, first)
  return folded({ pandoc.CodeBlock(out, pandoc.Attr(block.identifier, { "console" })) }, out, "output",
    fold_wish(block, first))
end

local function CodeBlock(block)
  if block.attributes.file or block.attributes.snippet then
    return excerpt_cell(block)
  elseif has_class(block, "run") then
    if has_class(block, "c") then return run_cell(block) end
    if has_class(block, "console") then return console_cell(block) end
    fail(fence_line(block), "a .run cell must also be .c or .console")
  end
  return nil
end

---------------------------------------------------------------- headers

-- Sections take their numbers from the file name, so chapter 10 is
-- "10" and its sections "10.1" whatever chapters exist before it.
-- Exercise and solution sets sit one level below their chapter, unnumbered.
-- Generated ids get a per-file prefix, so ids stay unique in the whole book.
local id_prefix = ({ chapters = "ch", exercises = "ex", solutions = "sol" })[PART]
id_prefix = id_prefix and TAG and (id_prefix .. TAG .. "-") or nil
local renamed = {}

local function header_filter(doc)
  local top = 99
  for _, b in ipairs(doc.blocks) do
    if b.t == "Header" and b.level < top then top = b.level end
  end
  local shift = (PART == "exercises" or PART == "solutions") and top == 1 and 1 or 0
  local counters, seen_title = {}, false
  local blocks = {}
  for _, b in ipairs(doc.blocks) do
    if b.t == "Header" then
      local level = b.level + shift
      b.level = level
      if id_prefix and b.identifier ~= "" and not SOURCE:find("{#" .. b.identifier, 1, true) then
        renamed[b.identifier] = id_prefix .. b.identifier
        b.identifier = renamed[b.identifier]
      end
      if PART == "exercises" or PART == "solutions" then
        if not has_class(b, "unnumbered") then b.classes:insert("unnumbered") end
      elseif PART == "chapters" and CHAPTER and not has_class(b, "unnumbered") then
        if level == 1 then
          if seen_title then
            fail(find_line("# " .. pandoc.utils.stringify(b.content)),
              "a chapter has one level-1 heading (its title); use ## for sections")
          end
          seen_title = true
          b.attributes.number = tostring(CHAPTER)
          -- LaTeX numbers sections itself: start it at this chapter's number.
          blocks[#blocks + 1] = pandoc.RawBlock("latex", "\\setcounter{section}{" .. (CHAPTER - 1) .. "}")
        else
          counters[level] = (counters[level] or 0) + 1
          for deeper = level + 1, 9 do counters[deeper] = nil end
          local parts = { tostring(CHAPTER) }
          for l = 2, level do parts[#parts + 1] = tostring(counters[l] or 0) end
          b.attributes.number = table.concat(parts, ".")
        end
      end
    end
    blocks[#blocks + 1] = b
  end
  if PART == "chapters" and CHAPTER and not seen_title then
    fail(1, "a chapter starts with one level-1 heading, its title (# Title)")
  end
  doc.blocks = blocks
  return doc
end

---------------------------------------------------------------- figures

local figure_count = 0
local figure_labels = {} -- id -> "N.M"

local function Image(img)
  local name = img.src:match("^figures/(.+)%.gp$")
  if not name then return nil end
  local line = find_line("(" .. img.src, img.src)
  if not exists(img.src) then fail(line, "figure script " .. img.src .. " not found") end
  local rendered = BUILD .. "/figures/" .. name .. "." .. FIGURE_EXT
  if not exists(rendered) then
    fail(line, "figure " .. img.src .. " was not rendered: " .. rendered .. " is missing")
  end
  -- No extension: the assembling pandoc adds one with
  -- --default-image-extension (svg for HTML, pdf for LaTeX).
  img.src = BUILD .. "/figures/" .. name
  if CHAPTER and PART == "chapters" then
    figure_count = figure_count + 1
    local number = CHAPTER .. "." .. figure_count
    -- A stable anchor for every figure: its label, or figure-N-M.
    if img.identifier == "" then img.identifier = "figure-" .. CHAPTER .. "-" .. figure_count end
    figure_labels[img.identifier] = number
    local caption = pandoc.List({ pandoc.Str("Figure"), pandoc.Space(), pandoc.Str(number .. ":"), pandoc.Space() })
    caption:extend(img.caption)
    img.caption = caption
  end
  return img
end

-- Tables with a caption become "Table N.M", with a stable anchor
-- table-N-M (a span at the caption's start: it survives the markdown pass).
local table_count = 0
local function Table(tbl)
  if not (CHAPTER and PART == "chapters") then return nil end
  local long = tbl.caption and tbl.caption.long
  if not long or #long == 0 then return nil end
  table_count = table_count + 1
  local number = CHAPTER .. "." .. table_count
  local first = long[1]
  if first.t ~= "Plain" and first.t ~= "Para" then return nil end
  local lead = pandoc.List({ pandoc.Span({}, pandoc.Attr("table-" .. CHAPTER .. "-" .. table_count)),
    pandoc.Str("Table"), pandoc.Space(), pandoc.Str(number .. ":"), pandoc.Space() })
  lead:extend(first.content)
  first.content = lead
  return tbl
end

-- Problems in exercise and solution sets are paragraphs that open with a
-- bold "N. Title." (or "N."): they become "Exercise C.N" / "Solution C.N"
-- with a stable anchor exercise-C-N / solution-C-N, so a problem can be
-- linked as book.html#exercise-6-3.  A solution links to its problem.
local function problem(para)
  if not (CHAPTER and (PART == "exercises" or PART == "solutions")) then return nil end
  local strong = para.content[1]
  if not strong or strong.t ~= "Strong" then return nil end
  local first = strong.content[1]
  if not first or first.t ~= "Str" then return nil end
  local n, rest = first.text:match("^(%d+)%.(.*)$")
  if not n then return nil end
  local kind = PART == "exercises" and "exercise" or "solution"
  local label = (PART == "exercises" and "Exercise " or "Solution ") .. CHAPTER .. "." .. n .. "." .. rest
  local inner = pandoc.List({ pandoc.Str(label) })
  for i = 2, #strong.content do inner:insert(strong.content[i]) end
  if PART == "solutions" then
    inner[1] = pandoc.Link({ pandoc.Str(label) }, "#exercise-" .. CHAPTER .. "-" .. n)
  end
  strong.content = inner
  para.content:insert(1, pandoc.Span({}, pandoc.Attr(kind .. "-" .. CHAPTER .. "-" .. n)))
  return para
end

---------------------------------------------------------------- citations

-- [@key] cites an entry of the bibliography (NB_BIBLIOGRAPHY, a BibTeX
-- file); the assembling pandoc's --citeproc formats it.  An unknown key
-- stops the build here, with the line, rather than printing "(key?)".
local BIBLIOGRAPHY = env("NB_BIBLIOGRAPHY", "")
local bib_keys = nil
local function known_key(key)
  if bib_keys == nil then
    bib_keys = {}
    local text = BIBLIOGRAPHY ~= "" and read_file(BIBLIOGRAPHY) or nil
    if BIBLIOGRAPHY ~= "" and not text then
      fail(find_line("@" .. key), "bibliography " .. BIBLIOGRAPHY .. " not found (NB_BIBLIOGRAPHY)")
    end
    for k in (text or ""):gmatch("@%a+%s*{%s*([^,%s]+)%s*,") do bib_keys[k] = true end
  end
  return bib_keys[key]
end

-- @fig:label -> "Figure N.M", a link to the figure in this file; any other
-- key must be in the bibliography.
local function Cite(cite)
  local id = cite.citations[1].id
  if #cite.citations == 1 and id:match("^fig:") then
    local number = figure_labels[id]
    if not number then fail(find_line("@" .. id), "unknown figure label '" .. id .. "'") end
    return pandoc.Link({ pandoc.Str("Figure"), pandoc.Space(), pandoc.Str(number) }, "#" .. id)
  end
  for _, c in ipairs(cite.citations) do
    if c.id:match("^fig:") then
      fail(find_line("@" .. c.id), "a figure reference '@" .. c.id .. "' stands alone, not among citations")
    end
    if not known_key(c.id) then
      local where = BIBLIOGRAPHY ~= "" and BIBLIOGRAPHY or "no bibliography (NB_BIBLIOGRAPHY is empty)"
      fail(find_line("@" .. c.id .. "]", "@" .. c.id .. ";", "@" .. c.id),
        "unknown citation key '" .. c.id .. "': not in " .. where)
    end
  end
  return nil
end

local function Link(link)
  local target = link.target:match("^#(.+)$")
  if target and renamed[target] then
    link.target = "#" .. renamed[target]
    return link
  end
  return nil
end

---------------------------------------------------------------- substitution

local function substitute(text)
  if not text:find("{{", 1, true) then return nil end
  return (text:gsub("{{([^{}]*)}}", function(name)
    if not name:match("^[a-z0-9_]+$") then
      fail(find_line("{{" .. name .. "}}"), "bad value name '" .. name .. "' (use [a-z0-9_]+)")
    end
    local v = values[name]
    if v == nil then
      local known = VALUE_FILES:match("%S") and ("the values of " .. VALUE_FILES .. " and this file's cells")
        or "this file's cells (NB_VALUE_FILES is empty)"
      fail(find_line("{{" .. name .. "}}"), "unknown value '" .. name .. "': not recorded by " .. known)
    end
    return v
  end))
end

local function text_field(field)
  return function(el)
    local s = substitute(el[field])
    if s then
      el[field] = s
      return el
    end
    return nil
  end
end

-- Prose: a "{{" left after substitution is a reference the author
-- mistyped ("{{ name }}", "{{name}"), not text to print.
local function Str(el)
  local s = substitute(el.text)
  if s then el.text = s end
  if el.text:find("{{", 1, true) or el.text:find("}}", 1, true) then
    fail(find_line(el.text, "{{"), "malformed value reference near '" .. el.text
      .. "' (write {{name}}, name in [a-z0-9_]+, no spaces)")
  end
  return s and el or nil
end

-- A calculator panel starts from the chapter's worked example, so a
-- default may be a value: {{name}} in a .calc block's attributes.
local function calc_defaults(el)
  if not has_class(el, "calc") then return nil end
  local changed = false
  for k, v in pairs(el.attributes) do
    local s = substitute(v)
    if s then
      el.attributes[k] = s
      changed = true
    end
  end
  return changed and el or nil
end

return {
  { Pandoc = header_filter },
  { Image = Image, CodeBlock = CodeBlock, Table = Table, Para = problem },
  { Cite = Cite, Link = Link },
  {
    Str = Str,
    Math = text_field("text"),
    Code = text_field("text"),
    RawInline = text_field("text"),
    RawBlock = text_field("text"),
    CodeBlock = calc_defaults,
  },
}
