--[[
narrow_figures.lua: each figure of the HTML book carries its narrow drawing.

The notebook filter leaves a figure as an image of BUILD/figures/NN-name
(the format picks .svg).  The Makefile also draws BUILD/figures/narrow/
NN-name.svg for a phone's column; this filter wraps the image in a <picture>
whose <source> (inline, as a data: URI, since pandoc's --self-contained
inlines only <img src>) the browser takes below PHONE_MAX, so a phone shows
the narrow drawing and a wider screen the print one.  The caption stays
pandoc's own, so citations and math in it render as before.  A figure whose
narrow drawing is missing fails the build.
]]

local PHONE_MAX = "760px" -- below this the print drawing's small text falls under 9 px

local B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
local function base64(s)
  local out = {}
  for i = 1, #s, 3 do
    local a, b, c = s:byte(i, i + 2)
    local n = (a << 16) | ((b or 0) << 8) | (c or 0)
    local q = {}
    for k = 1, 4 do q[k] = B64:sub(((n >> (6 * (4 - k))) & 63) + 1, ((n >> (6 * (4 - k))) & 63) + 1) end
    if not b then q[3] = "=" end
    if not c then q[4] = "=" end
    out[#out + 1] = table.concat(q)
  end
  return table.concat(out)
end

local function read(path)
  local f = io.open(path, "rb")
  if not f then return nil end
  local s = f:read("a")
  f:close()
  return s
end

local function attr_html(s)
  return (s:gsub("&", "&amp;"):gsub('"', "&quot;"):gsub("<", "&lt;"))
end

-- A figure: a paragraph holding one image whose title pandoc marked "fig:".
local function Para(p)
  if not FORMAT:match("html") then return nil end
  if #p.content ~= 1 or p.content[1].t ~= "Image" then return nil end
  local img = p.content[1]
  if img.title:sub(1, 4) ~= "fig:" then return nil end
  local dir, name = img.src:match("^(.-)/?figures/([^/]+)$")
  if not name then return nil end -- not a drawn figure
  name = name:gsub("%.svg$", "")
  local narrow = (dir ~= "" and dir .. "/" or "") .. "figures/narrow/" .. name .. ".svg"
  local svg = read(narrow)
  if not svg then
    io.stderr:write("narrow_figures: " .. narrow .. " is missing (make figures draws it)\n")
    os.exit(1)
  end
  local id = img.identifier
  img.identifier = ""
  img.title = ""
  local caption = img.caption
  img.caption = {}
  local figure = '<figure' .. (id ~= "" and (' id="' .. attr_html(id) .. '"') or "") .. '>'
  local source = '<picture><source media="(max-width: ' .. PHONE_MAX .. ')" srcset="data:image/svg+xml;base64,'
    .. base64(svg) .. '">'
  -- The caption as pandoc writes a figure's (the alt text repeats it).
  local captioned = { pandoc.RawInline("html", '<figcaption aria-hidden="true">') }
  for _, x in ipairs(caption) do captioned[#captioned + 1] = x end
  captioned[#captioned + 1] = pandoc.RawInline("html", "</figcaption>")
  return {
    pandoc.RawBlock("html", figure),
    pandoc.Plain({ pandoc.RawInline("html", source), pandoc.Image(caption, img.src, "", img.attr),
                   pandoc.RawInline("html", "</picture>") }),
    pandoc.Plain(captioned),
    pandoc.RawBlock("html", "</figure>"),
  }
end

return { { Para = Para } }
