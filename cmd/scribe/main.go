// Command scribe turns AI-agent sessions into a durable, readable, searchable
// archive, and back again. See the README and docs/FORMAT.md.
package main

import (
	"os"

	"github.com/scribe-archive/scribe/internal/hugeheap"
)

func main() {
	hugeheap.Advise()
	setMemory()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
