//go:build !unix

package fsutil

// oNonblock is 0 where open has no O_NONBLOCK.
const oNonblock = 0
