package cases

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/monitor/penalty"
	"github.com/trenzinho/trenzinho/profile"
)

func electronicProfile() *profile.Profile {
	p := profile.Piuma()
	p.Notification.Electronic, p.Notification.ElectronicAct = true, "Decreto nº 1/2026"
	return p
}

// TestElectronicWindow: an auto issued on Friday 2 October waits in the portal until 12 October
// (10 days, the day of issue excluded); a ciência delivers it on any of those days, not after,
// and not once delivered otherwise; past the window, the case falls back to the other means;
// an opening, early or late, delivers nothing.
func TestElectronicWindow(t *testing.T) {
	p := electronicProfile()
	c := newCase()
	for _, x := range []struct {
		day      string
		counts   bool
		fallback bool
	}{{"2026-10-02", true, false}, {"2026-10-07", true, false}, {"2026-10-12", true, false}, {"2026-10-13", false, true}} {
		now := noon(x.day)
		if got := c.AwaitsCiencia(p, now); got != x.counts {
			t.Errorf("%s: awaits the ciência %v, want %v", x.day, got, x.counts)
		}
		e, ok := c.ElectronicNotice(p, nil, now)
		if !ok || e.Available != "2026-10-02" || e.Until != "2026-10-12" || e.Fallback != x.fallback || e.Act != "Decreto nº 1/2026" {
			t.Errorf("%s: %+v %v", x.day, e, ok)
		}
		if x.fallback && !strings.Contains(e.Text, "notificar por outro meio") {
			t.Errorf("%s: %q", x.day, e.Text)
		}
	}
	// An opening is not the ciência: the auto still waits, then falls back.
	opened := &Opening{At: noon("2026-10-05"), User: "orla"}
	if e, _ := c.ElectronicNotice(p, opened, noon("2026-10-05")); e.Fallback || !strings.Contains(e.Text, "Abrir o auto não é ciência") || !c.AwaitsCiencia(p, noon("2026-10-05")) {
		t.Errorf("opened, no ciência: %+v", e)
	}
	if e, _ := c.ElectronicNotice(p, opened, noon("2026-10-14")); !e.Fallback {
		t.Errorf("opened, no ciência, after the window: %+v", e)
	}
	// The ciência (its notify event, electronic) is said as such, with who declared it.
	ec := newCase()
	ec.Apply(Action{Action: ActionNotify, Mode: penalty.ModeElectronic, Date: "2026-10-05"}, "orla")
	ec.Events = append(ec.Events, Event{Seq: 2, Action: ActionNotify, Date: "2026-10-05", User: "orla"})
	if e, _ := ec.ElectronicNotice(p, opened, noon("2026-10-20")); e.Fallback || !strings.Contains(e.Text, "declarada no portal em 05/10/2026, por orla") {
		t.Errorf("after the ciência: %+v", e)
	}
	// Delivered by post on the 5th: the portal's opening no longer delivers.
	must(t, c, p, "2026-10-05", notifyMail)
	if c.AwaitsCiencia(p, noon("2026-10-06")) {
		t.Error("a ciência awaited after delivery by post")
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
	if _, ok := imp.ElectronicNotice(p, nil, time.Now()); ok || imp.AwaitsCiencia(p, noon("2026-10-03")) {
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

// TestOfficeCiencia: opening an auto in the portal delivers nothing; the ciência is the
// representative's explicit declaration, refused — each with its reason — without the
// licensee's term of adhesion (or before it was signed), by a user the term does not name, or
// before the PDF was served to that user; declared, the case is notified (electronic) on the
// day, and the event and the audit name the term, the user and the hash of the PDF served; a
// second declaration, or one after the window, is refused.
func TestOfficeCiencia(t *testing.T) {
	ctx := context.Background()
	o, m, now, c1, c2 := twoIssued(t)
	rep := Actor{User: "rep", Role: RoleLicensee, RemoteAddr: "198.51.100.7"}
	other := Actor{User: "caixa", Role: RoleLicensee}
	refused := func(what string, err error, kind Kind, code string) {
		t.Helper()
		var e *Error
		if !errors.As(err, &e) || e.Kind != kind || len(e.Reasons) != 1 || e.Reasons[0].Code != code || e.Msg == "" {
			t.Errorf("%s: %v, want %s", what, err, code)
		}
	}

	*now = time.Date(2026, 10, 5, 9, 30, 0, 0, sp)
	opened, err := o.Open(ctx, c1.ID, rep)
	if err != nil || opened.Opening == nil || opened.State != penalty.StatusIssued || opened.Notified != "" {
		t.Fatalf("the opening delivered: %+v %v", opened, err)
	}
	// No term of adhesion on file: nothing is taken.
	refused("no adhesion hook", ciencia(o, c1.ID, rep), Conflict, ReasonNoElectronicAdhesion)
	term := Adhesion{Term: "Termo de adesão nº 4/2026", SignedOn: "2026-10-06", Representatives: []string{"rep"}}
	o.AdhesionOnFile = func(_ context.Context, l string) (Adhesion, bool) { return term, l == "L1" }
	refused("a term signed tomorrow", ciencia(o, c1.ID, rep), Conflict, ReasonNoElectronicAdhesion)
	term.SignedOn = "2026-09-30"
	refused("a user the term does not name", ciencia(o, c1.ID, other), Forbidden, ReasonNotARepresentative)
	refused("staff", ciencia(o, c1.ID, Actor{User: "rep", Role: RoleFiscal}), Forbidden, ReasonNotARepresentative)
	refused("before the PDF", ciencia(o, c1.ID, rep), Conflict, ReasonPDFNotServed)
	// Served to another user of the licensee: not to the representative.
	if err := o.ServePDF(ctx, c1.ID, strings.Repeat("cd", 32), other); err != nil {
		t.Fatal(err)
	}
	refused("the PDF served to another user", ciencia(o, c1.ID, rep), Conflict, ReasonPDFNotServed)
	served := time.Date(2026, 10, 5, 9, 31, 12, 0, sp)
	*now = served
	if err := o.ServePDF(ctx, c1.ID, strings.Repeat("ab", 32), rep); err != nil {
		t.Fatal(err)
	}
	if m.state.audit[len(m.state.audit)-1].Action != AuditCasePDFServed {
		t.Errorf("the serving not audited: %s", actions(m.state.audit))
	}
	// Declared on Monday 5 October, 9:40: notified that day.
	*now = time.Date(2026, 10, 5, 9, 40, 0, 0, sp)
	c, err := o.Ciencia(ctx, c1.ID, rep)
	if err != nil {
		t.Fatal(err)
	}
	last := c.Events[len(c.Events)-1]
	var act Action
	if err := json.Unmarshal(last.Data, &act); err != nil {
		t.Fatal(err)
	}
	if c.State != penalty.StatusNotified || c.Notified != "2026-10-05" || c.Mode != penalty.ModeElectronic || last.User != "rep" {
		t.Errorf("after the ciência: %+v", c.Status)
	}
	for _, want := range []string{"Termo de adesão nº 4/2026", "30/09/2026", "05/10/2026 09:40:00", "05/10/2026 09:31:12", strings.Repeat("ab", 32), "rep", "Decreto nº 9/2026"} {
		if !strings.Contains(act.Note, want) {
			t.Errorf("the ciência's note lacks %q: %s", want, act.Note)
		}
	}
	row := m.state.audit[len(m.state.audit)-1]
	if row.Action != AuditCaseCiencia || row.User != "rep" || !strings.Contains(row.After, strings.Repeat("ab", 32)) || !strings.Contains(row.After, "198.51.100.7") {
		t.Errorf("the ciência's audit: %+v", row)
	}
	if e, _ := c.ElectronicNotice(o.Profile, c.Opening, *now); !strings.Contains(e.Text, "declarada no portal em 05/10/2026, por rep") {
		t.Errorf("the notice's text: %s", e.Text)
	}
	refused("a second ciência", ciencia(o, c1.ID, rep), Conflict, ReasonAlreadyDelivered)
	// The other auto is not declared within the 10 days (until 12 October).
	*now = time.Date(2026, 10, 13, 9, 0, 0, 0, sp)
	if err := o.ServePDF(ctx, c2.ID, strings.Repeat("ef", 32), rep); err != nil {
		t.Fatal(err)
	}
	refused("after the window", ciencia(o, c2.ID, rep), Conflict, ReasonNotAwaitingCiencia)
	// A profile without the electronic notice takes none.
	o.Profile.Notification.Electronic = false
	*now = time.Date(2026, 10, 6, 9, 0, 0, 0, sp)
	refused("no electronic notice", ciencia(o, c2.ID, rep), Conflict, ReasonNotAwaitingCiencia)
	if got, _ := m.state.Case(ctx, c2.ID); got.State != penalty.StatusIssued {
		t.Errorf("a refused ciência changed the case: %+v", got.Status)
	}
}

func ciencia(o *Office, id int64, a Actor) error {
	_, err := o.Ciencia(context.Background(), id, a)
	return err
}

// twoIssued is an office with the electronic notice adopted ("Decreto nº 9/2026") and two autos
// of L1 issued on Friday 2 October 2026 at 10:00 (drafts D1 and D2), with the clock it reads.
func twoIssued(t *testing.T) (*Office, *memory, *time.Time, *Case, *Case) {
	t.Helper()
	m := newMemory()
	now := time.Date(2026, 10, 2, 10, 0, 0, 0, sp)
	o := newOffice(t, m, &now)
	o.Profile.Notification.Electronic, o.Profile.Notification.ElectronicAct = true, "Decreto nº 9/2026"
	putDraft(t, m, "D1", time.Date(2026, 10, 1, 15, 0, 0, 0, sp))
	putDraft(t, m, "D2", time.Date(2026, 10, 1, 16, 0, 0, 0, sp))
	var cs [2]*Case
	for i, id := range []string{"D1", "D2"} {
		c, _, err := o.Issue(context.Background(), id, "", joao)
		if err != nil {
			t.Fatal(err)
		}
		cs[i] = c
	}
	return o, m, &now, cs[0], cs[1]
}
