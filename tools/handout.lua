-- A student's handout (tools/course.py, make handout): the exercise set's
-- sentence on variants ([...]{.variant-howto}, which in the book speaks of
-- "a seed s") becomes that student's own commands with their seed, given as
-- metadata handout-seed and handout-chapter.  Without that metadata (the
-- book) the sentence stays as written.
local seed, chapter

function Meta(m)
  seed = m["handout-seed"] and pandoc.utils.stringify(m["handout-seed"])
  chapter = m["handout-chapter"] and pandoc.utils.stringify(m["handout-chapter"])
end

function Span(s)
  if not s.classes:includes("variant-howto") or not seed then return nil end
  local c = function (t) return pandoc.Code(t) end
  return pandoc.Span({
    pandoc.Str("Your"), pandoc.Space(), pandoc.Str("variant"), pandoc.Space(), pandoc.Str("is"), pandoc.Space(),
    pandoc.Str("seed"), pandoc.Space(), pandoc.Str(seed .. ":"), pandoc.Space(),
    c("make exercise N=" .. chapter .. " SEED=" .. seed), pandoc.Space(),
    pandoc.Str("checks"), pandoc.Space(), pandoc.Str("your"), pandoc.Space(), pandoc.Str("C"), pandoc.Space(),
    pandoc.Str("kit"), pandoc.Space(), pandoc.Str("on"), pandoc.Space(), pandoc.Str("it,"), pandoc.Space(),
    pandoc.Str("and"), pandoc.Space(), c("build/book.html?seed=" .. seed), pandoc.Space(),
    pandoc.Str("shows"), pandoc.Space(), pandoc.Str("it"), pandoc.Space(), pandoc.Str("in"), pandoc.Space(),
    pandoc.Str("the"), pandoc.Space(), pandoc.Str("book"), pandoc.Space(), pandoc.Str("with"), pandoc.Space(),
    pandoc.Str("answer"), pandoc.Space(), pandoc.Str("boxes")
  }, pandoc.Attr("", { "variant-howto" }))
end

return { { Meta = Meta }, { Span = Span } }
