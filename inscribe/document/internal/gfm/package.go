// Package gfm is goldmark's GitHub Flavored Markdown extensions (tables,
// strikethrough, task lists and autolinks: [GFM]) for package document's
// HTML, copied from github.com/yuin/goldmark v1.8.7's package extension
// (files gfm.go, linkify.go, table.go, strikethrough.go and tasklist.go;
// MIT license, LICENSE here) with one change: the autolinks' default
// patterns compile when a Linkify is first made, not when the program
// starts (linkify.go). Linking goldmark's package extension compiled them
// in every scribe process, whatever its command: 2 to 4 ms of a command's
// start and 100 to 135 of its page faults (issue 33). The copy goes when
// goldmark compiles them lazily itself; until then a test renders the same
// markdown through both and requires the same HTML, and another fails when
// go.mod requires another goldmark than the one copied.
package gfm
