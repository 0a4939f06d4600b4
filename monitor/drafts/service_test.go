package drafts_test

import (
	"context"
	"strings"
	"testing"

	"github.com/trenzinho/trenzinho/internal/testkit/fleettest"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/rules"
)

// "Em serviço" is an element of Art. 23. A train with no service switch and no door input
// speeding at 45 km/h opens a speed episode that grounds no auto (service only inferred from its
// movement), so no draft; the same trip with the switch on is drafted, and its fact states how
// service was established.
func TestSpeedDraftStatesHowServiceWasEstablished(t *testing.T) {
	f := newRegFixture(t)
	fleettest.Play(t, f.engine, f.db, &f.seq, fleettest.Trip{Vehicle: "PIU-001", Card: "000000000086H101", Start: noonFriday,
		Seconds: fleettest.Drive(-20.8367, -40.7292, speeding()...), NoServiceSwitch: true})
	eps, _, err := f.db.Episodes(context.Background(), store.EpisodeFilter{Rule: rules.RuleSpeed}, 10, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(eps) != 1 || eps[0].GroundsAuto || !strings.Contains(eps[0].GroundsNote, "em serviço inferido apenas pelo movimento") {
		t.Fatalf("no switch: %+v", eps)
	}
	if made := f.drafts(t); len(made) != 0 {
		t.Fatalf("no switch: %d drafts", len(made))
	}

	f = newRegFixture(t)
	f.play(t, "PIU-001", noonFriday, "000000000086H101", speeding()) // the switch on from 12:00
	made := f.drafts(t)
	if len(made) != 1 || made[0].Draft.Rules[0] != rules.RuleSpeed {
		t.Fatalf("switch on: %d drafts, want the speed draft", len(made))
	}
	desc := made[0].Draft.Facts[0].Description
	if !strings.Contains(desc, "Em serviço, constatado por: chave de serviço ligada desde 12:00.") {
		t.Errorf("the fact does not state the switch: %s", desc)
	}
}
