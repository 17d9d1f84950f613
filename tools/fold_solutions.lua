-- Batching by the Numbers: each worked solution folded behind a "show the
-- worked solution" control, for the practice edition (make practice).
--
-- A solution starts at a paragraph that opens with its anchor span
-- (solution-C-N, set by tools/notebook.lua) and runs to the next solution,
-- heading or horizontal rule; in HTML it becomes
--   <details class="solution" data-solution="C-N"><summary>...</summary> ... </details>
-- The anchor stays inside, so links to #solution-C-N still resolve (the
-- page's answer boxes open the fold before following them).  Other formats
-- are left as they are.

local function solution_id(block)
  if block.t ~= "Para" or #block.content == 0 then return nil end
  local first = block.content[1]
  if first.t == "Span" then
    return first.identifier:match("^solution%-(%d+%-%d+)$")
  end
  return nil
end

function Pandoc(doc)
  if not FORMAT:match("html") then return doc end
  local out, open = pandoc.List(), false
  local function close()
    if open then out:insert(pandoc.RawBlock("html", "</details>")) end
    open = false
  end
  for _, b in ipairs(doc.blocks) do
    local id = solution_id(b)
    if id then
      close()
      local c, n = id:match("^(%d+)%-(%d+)$")
      out:insert(pandoc.RawBlock("html", '<details class="solution" data-solution="' .. id ..
        '"><summary>Show the worked solution (' .. c .. "." .. n .. ")</summary>"))
      open = true
    elseif b.t == "Header" or b.t == "HorizontalRule" then
      close()
    end
    out:insert(b)
  end
  close()
  doc.blocks = out
  return doc
end
