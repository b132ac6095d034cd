package bench

import (
	"os"
	"strconv"
	"strings"
	"time"
)

// RoundCores is how many cores, on average over a round, each part of
// the machine used.
type RoundCores struct {
	Device float64 `json:"device"`
	Client float64 `json:"client"` // this process: both identities' clients
	Other  float64 `json:"other"`  // every other process on the machine
}

// cpuClock reads the CPU seconds the device, this process and the whole
// machine have used.
type cpuClock struct {
	wall                   time.Time
	device, client, system float64
	ok                     bool
}

func readCPU(devicePid int) cpuClock {
	c := cpuClock{wall: time.Now()}
	var ok1, ok2, ok3 bool
	c.device, ok1 = procCPU(devicePid)
	c.client, ok2 = procCPU(os.Getpid())
	c.system, ok3 = machineCPU()
	c.ok = ok1 && ok2 && ok3
	return c
}

// since is the cores each part used from c0 to c.
func (c cpuClock) since(c0 cpuClock) RoundCores {
	wall := c.wall.Sub(c0.wall).Seconds()
	if !c.ok || !c0.ok || wall <= 0 {
		return RoundCores{}
	}
	dev, cl := c.device-c0.device, c.client-c0.client
	return RoundCores{Device: dev / wall, Client: cl / wall, Other: max(c.system-c0.system-dev-cl, 0) / wall}
}

// machineCPU is the CPU seconds every core of the machine has spent
// busy (all but idle and I/O wait), from /proc/stat (Linux).
func machineCPU() (float64, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return 0, false
	}
	var busy float64
	for i, v := range f[1:] {
		if i == 3 || i == 4 { // idle, iowait
			continue
		}
		if i >= 7 { // guest time is counted in user already
			break
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return 0, false
		}
		busy += x
	}
	const ticks = 100 // USER_HZ on Linux
	return busy / ticks, true
}

// coreSums weighs segments' core use by their length.
type coreSums struct {
	sum  RoundCores
	wall float64
}

func (c *coreSums) add(u RoundCores, wall float64) {
	c.sum.Device += u.Device * wall
	c.sum.Client += u.Client * wall
	c.sum.Other += u.Other * wall
	c.wall += wall
}

func (c *coreSums) mean() RoundCores {
	if c.wall == 0 {
		return RoundCores{}
	}
	return RoundCores{Device: c.sum.Device / c.wall, Client: c.sum.Client / c.wall, Other: c.sum.Other / c.wall}
}
