package cases

import (
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/profile"
)

func electronicProfile() *profile.Profile {
	p := profile.Piuma()
	p.Notification.Electronic, p.Notification.ElectronicAct = true, "Decreto nº 1/2026"
	return p
}

// TestElectronicWindow: an auto issued on Friday 2 October waits in the portal until 12 October
// (10 days, the day of issue excluded); an opening counts on any of those days, not after, and
// not once delivered otherwise; past the window, the case falls back to the other means.
func TestElectronicWindow(t *testing.T) {
	p := electronicProfile()
	c := newCase()
	for _, x := range []struct {
		day      string
		counts   bool
		fallback bool
	}{{"2026-10-02", true, false}, {"2026-10-07", true, false}, {"2026-10-12", true, false}, {"2026-10-13", false, true}} {
		now := noon(x.day)
		if got := c.OpeningCounts(p, now); got != x.counts {
			t.Errorf("%s: opening counts %v, want %v", x.day, got, x.counts)
		}
		e, ok := c.ElectronicNotice(p, nil, now)
		if !ok || e.Available != "2026-10-02" || e.Until != "2026-10-12" || e.Fallback != x.fallback || e.Act != "Decreto nº 1/2026" {
			t.Errorf("%s: %+v %v", x.day, e, ok)
		}
		if x.fallback && !strings.Contains(e.Text, "notificar por outro meio") {
			t.Errorf("%s: %q", x.day, e.Text)
		}
	}
	// A counted opening is the ciência.
	opened := &Opening{At: noon("2026-10-05"), User: "orla", Counted: true}
	if e, _ := c.ElectronicNotice(p, opened, noon("2026-10-20")); e.Fallback || !strings.Contains(e.Text, "Ciência") {
		t.Errorf("after the ciência: %+v", e)
	}
	// A late opening is recorded, not counted: still the fallback.
	late := &Opening{At: noon("2026-10-14"), User: "orla"}
	if e, _ := c.ElectronicNotice(p, late, noon("2026-10-14")); !e.Fallback {
		t.Errorf("late opening: %+v", e)
	}
	// Delivered by post on the 5th: the portal's opening no longer delivers.
	must(t, c, p, "2026-10-05", notifyMail)
	if c.OpeningCounts(p, noon("2026-10-06")) {
		t.Error("an opening counts after delivery by post")
	}
	if e, _ := c.ElectronicNotice(p, nil, noon("2026-10-20")); e.Fallback || !strings.Contains(e.Text, "outro meio (via postal com AR)") {
		t.Errorf("delivered by post: %+v", e)
	}
	// The window is the profile's.
	p.Notification.ElectronicDays = 3
	if e, _ := newCase().ElectronicNotice(p, nil, noon("2026-10-06")); e.Until != "2026-10-05" || !e.Fallback {
		t.Errorf("3 days: %+v", e)
	}
	// Without the electronic notice, or for an imported record, nothing.
	if _, ok := newCase().ElectronicNotice(profile.Piuma(), nil, time.Now()); ok {
		t.Error("electronic notice without the profile's leave")
	}
	imp := newCase()
	imp.Origin = OriginImport
	if _, ok := imp.ElectronicNotice(p, nil, time.Now()); ok || imp.OpeningCounts(p, noon("2026-10-03")) {
		t.Error("an imported record notified in the portal")
	}
}

// TestElectronicNeedsItsAct: a profile that enables the electronic notice names the act.
func TestElectronicNeedsItsAct(t *testing.T) {
	y := strings.Replace(string(profile.PiumaYAML()), "  electronic: false\n", "  electronic: true\n", 1)
	if _, err := profile.Parse([]byte(y), "x.yaml"); err == nil || !strings.Contains(err.Error(), "notification.electronic_act") {
		t.Errorf("electronic without its act: %v", err)
	}
	y = strings.Replace(y, `  electronic_act: ""`, `  electronic_act: "Decreto nº 1/2026"`, 1)
	if _, err := profile.Parse([]byte(y), "x.yaml"); err != nil {
		t.Errorf("electronic with its act: %v", err)
	}
}
