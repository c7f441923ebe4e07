package local

import (
	"bufio"
	"os"
	"strconv"
	"strings"
)

// availableMemory returns MemAvailable from /proc/meminfo in bytes, or 0
// when it cannot be read.
func availableMemory() int64 {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	return parseMemAvailable(bufio.NewScanner(f))
}

func parseMemAvailable(sc *bufio.Scanner) int64 {
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) >= 2 && fields[0] == "MemAvailable:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return 0
			}
			return kb * 1024
		}
	}
	return 0
}
