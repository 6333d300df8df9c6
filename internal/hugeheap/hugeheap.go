// Package hugeheap backs the start of the Go heap with transparent huge
// pages, on Linux, where the system gives them to the programs that ask
// for them (transparent_hugepage set to "madvise", most distributions'
// default) or to all; not where it is "never".
//
// The first few megabytes of heap are most of the memory a short command
// touches: `scribe version` about 600 pages of it, a hook's append or a
// search about 700, each a page fault. Where a fault is dear, as in a
// virtual machine whose host backs a page only once it is touched (12 to
// 13 µs a page on the machine of bench/README.md, stop 47), those faults
// are a tenth to a fifth of such a command's CPU. A huge page of 2 MiB
// costs one.
//
// The package's init advises the 4 MiB chunk of heap the runtime
// allocates in (MADV_HUGEPAGE) and has the kernel gather the pages already
// touched in it into huge pages (MADV_COLLAPSE, Linux 6.1), a huge page at
// a time: advice alone leaves small pages in a range whose first page was
// touched before it. [Advise] does the same for the chunk the heap has
// grown into since, once the program's initializations are done. Two
// chunks at most are advised, and the heap's later ones are left as the
// system has them: what huge pages may add to a process's memory is
// bounded by 8 MiB, which a long command fills anyway.
//
// It is best effort: where the kernel refuses, nothing changes. A
// collapse may wait for the kernel to make a huge page free (0.06 to 4 ms
// here, once 20). GODEBUG=disablethp=1, the runtime's own switch against
// huge pages for its heap, turns it off.
package hugeheap
