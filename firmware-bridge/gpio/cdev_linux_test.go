package gpio

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// simChip finds a chip of the kernel's GPIO simulators (gpio-sim, gpio-mockup), whose lines a
// test may drive; it skips the test, with the reason, where there is none.
func simChip(t *testing.T) string {
	chips, _ := filepath.Glob("/dev/gpiochip*")
	for _, c := range chips {
		f, err := os.OpenFile(c, os.O_RDWR, 0)
		if err != nil {
			continue
		}
		var info unix.GPIOChipInfo
		err = ioctl(int(f.Fd()), unix.GPIO_GET_CHIPINFO_IOCTL, unsafe.Pointer(&info))
		f.Close()
		label := strings.TrimRight(string(info.Label[:]), "\x00")
		if err == nil && info.Lines > 0 && (strings.HasPrefix(label, "gpio-sim") || strings.HasPrefix(label, "gpio-mockup")) {
			return c
		}
	}
	t.Skipf("no gpio-sim or gpio-mockup chip among %v (load one: modprobe gpio-mockup gpio_mockup_ranges=-1,8, "+
		"or configure gpio-sim through configfs); the character device is tested where the kernel offers a simulator", chips)
	return ""
}

func TestChipLine(t *testing.T) {
	chip := simChip(t)
	l, err := Open(chip+":0", false, "trenzinho-test")
	if err != nil {
		t.Fatal(err)
	}
	c := l.(*Chip)
	for _, on := range []bool{true, false, true} {
		if err := c.Set(on); err != nil {
			t.Fatal(err)
		}
		if got, err := c.Get(); err != nil || got != on {
			t.Fatalf("set %v, read back %v (%v)", on, got, err)
		}
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	// Released: the line can be requested again.
	l2, err := Open(chip+":0", true, "trenzinho-test")
	if err != nil {
		t.Fatal(err)
	}
	l2.Close()
}
