#!/bin/sh
# chapter-bar.sh PREV NEXT: the navigation bar of one chapter page
# (build/chapter-NN.html); PREV and NEXT are chapter numbers or "-".
set -eu
link() { [ "$2" = - ] && return 0; printf '<a class="%s" href="chapter-%s.html">%s</a>\n' "$1" "$2" "$3"; }
echo '<nav id="nb-bar" data-page="chapter" aria-label="Book navigation">'
echo '<a class="nb-contents" href="#TOC">Contents</a>'
echo '<a class="nb-book" href="book.html">Whole book</a>'
link nb-prev "$1" "&#8592; Chapter $1"
echo '<span class="nb-here"></span>'
link nb-next "$2" "Chapter $2 &#8594;"
echo '</nav>'
