package testenv

import (
	"bytes"
	"fmt"
	"strings"
)

// Diff returns a unified diff (three lines of context) that turns old into
// new, or "" when they are equal. It is minimal unless the lines between the
// common head and tail are too many to compare pairwise; then it shows them
// all as replaced.
func Diff(oldName string, old []byte, newName string, new []byte) string {
	if bytes.Equal(old, new) {
		return ""
	}
	a, b := splitLines(old), splitLines(new)
	ops := diffLines(a, b)
	var out strings.Builder
	fmt.Fprintf(&out, "--- %s\n+++ %s\n", oldName, newName)
	const context = 3
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		// A hunk: from context lines before this change to context lines
		// after the last change that is no further than 2*context away.
		start := max(0, i-context)
		end := i
		for j := i; j < len(ops); j++ {
			if ops[j].kind != ' ' {
				end = j + 1
			} else if j-end >= 2*context {
				break
			}
		}
		end = min(len(ops), end+context)
		oldLine, newLine := ops[start].a+1, ops[start].b+1
		var nOld, nNew int
		for _, o := range ops[start:end] {
			if o.kind != '+' {
				nOld++
			}
			if o.kind != '-' {
				nNew++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(oldLine, nOld), hunkRange(newLine, nNew))
		for _, o := range ops[start:end] {
			line := o.line
			out.WriteByte(o.kind)
			out.WriteString(strings.TrimSuffix(line, "\n"))
			out.WriteByte('\n')
			if !strings.HasSuffix(line, "\n") {
				out.WriteString("\\ No newline at end of file\n")
			}
		}
		i = end
	}
	return out.String()
}

func hunkRange(line, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", line-1)
	}
	if n == 1 {
		return fmt.Sprint(line)
	}
	return fmt.Sprintf("%d,%d", line, n)
}

// splitLines splits s after each "\n"; the last line may lack one.
func splitLines(s []byte) []string {
	var lines []string
	for len(s) > 0 {
		i := bytes.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, string(s))
			break
		}
		lines = append(lines, string(s[:i+1]))
		s = s[i+1:]
	}
	return lines
}

// op is one line of a diff: kept (' '), removed ('-') or added ('+'), with
// its index in the old and the new text (where it would be, for an added
// or a removed line).
type op struct {
	kind byte
	line string
	a, b int
}

// diffLines returns the edit script from a to b: a longest common
// subsequence of the lines between their common head and tail.
func diffLines(a, b []string) []op {
	head := 0
	for head < len(a) && head < len(b) && a[head] == b[head] {
		head++
	}
	tail := 0
	for tail < len(a)-head && tail < len(b)-head && a[len(a)-1-tail] == b[len(b)-1-tail] {
		tail++
	}
	ma, mb := a[head:len(a)-tail], b[head:len(b)-tail]
	var ops []op
	for i := 0; i < head; i++ {
		ops = append(ops, op{' ', a[i], i, i})
	}
	if len(ma)*len(mb) > 1<<22 {
		for i, l := range ma {
			ops = append(ops, op{'-', l, head + i, head})
		}
		for j, l := range mb {
			ops = append(ops, op{'+', l, head + len(ma), head + j})
		}
	} else {
		// lcs[i][j] is the length of a longest common subsequence of
		// ma[i:] and mb[j:].
		lcs := make([][]int32, len(ma)+1)
		for i := range lcs {
			lcs[i] = make([]int32, len(mb)+1)
		}
		for i := len(ma) - 1; i >= 0; i-- {
			for j := len(mb) - 1; j >= 0; j-- {
				if ma[i] == mb[j] {
					lcs[i][j] = lcs[i+1][j+1] + 1
				} else {
					lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
				}
			}
		}
		i, j := 0, 0
		for i < len(ma) || j < len(mb) {
			switch {
			case i < len(ma) && j < len(mb) && ma[i] == mb[j]:
				ops = append(ops, op{' ', ma[i], head + i, head + j})
				i++
				j++
			case i < len(ma) && (j == len(mb) || lcs[i+1][j] >= lcs[i][j+1]):
				ops = append(ops, op{'-', ma[i], head + i, head + j})
				i++
			default:
				ops = append(ops, op{'+', mb[j], head + i, head + j})
				j++
			}
		}
	}
	for k := 0; k < tail; k++ {
		ops = append(ops, op{' ', a[len(a)-tail+k], len(a) - tail + k, len(b) - tail + k})
	}
	return ops
}
