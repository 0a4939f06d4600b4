package sim

import "time"

// The demonstration day of `make run` (`firmware-bridge simulate --scenario demo`): three trains
// of the sample registry drive the itineraries the sample geofences authorise their licensees
// (geofences/piuma: L1's "Passeio noturno da orla" loop, L2's "Circuito diário do centro"),
// stop at the boarding points on them and park in their licensee's garage. Between those
// lawful trips, the script puts exactly the violations listed in DemoEvents, at fixed offsets
// from the start, and nothing else:
//
//   - music is played at 54 dB(A) at the meter, which is no emission under Art. 28 (70 dB(A))
//     and, estimated at 7.5 m (−11.48 dB), under the NBR 10151 limit of every area by day and by
//     night (the strictest, 45 dB at night, plus the 1 dB tolerance);
//   - but once: PIU-001 turns its music up to 74 dB(A) for 15 s 400 m from the Pronto
//     Atendimento, the warning its driver heeds (DemoWarnings), which opens nothing;
//   - speeds stay at or under 30 km/h, the limit, except in the scripted speeding;
//   - the drive between a garage and its itinerary takes less than the route rule's 60 s
//     outside the 50 m corridor;
//   - a train stops only at a boarding point or in its garage (a stop elsewhere is out of
//     service and would break the runs the script relies on);
//   - the driver's service switch is off while the train waits in its garage before its trip
//     and once it has parked for good, and on from the moment it leaves (the bridge reads it as
//     the Pi reads the GPIO, from a value file); the passenger door opens only during the stops
//     at the boarding points.
//
// The settings the monitor uses for the demonstration (internal/testkit/demo) make the itineraries
// valid every day at every hour and put the end of the service hours DemoServiceEnd after the
// start, with a grace of DemoGrace, so that the day can start at once at any wall-clock hour
// and the late return is late at a chosen moment.

// Places of the sample geofences (geofences/piuma), WGS84.
var (
	garageL1  = Point{-20.84183, -40.73952}  // g-l1, inside
	garageL1b = Point{-20.84170, -40.73945}  // g-l1, beside the first train
	garageL2  = Point{-20.828372, -40.72203} // g-l2, inside

	// L1's loop (it-l1-orla-noturna): A → B along the beach, C, D back inland, E, A.
	loopA = Point{-20.841035, -40.735349}
	loopB = Point{-20.832906, -40.72382}
	loopC = Point{-20.831606, -40.724857}
	loopD = Point{-20.838651, -40.734849}
	loopE = Point{-20.839952, -40.733812}

	// L2's circuit (it-l2-diario): P1 (= E) → P2 along the beach, P3 inland.
	circP1 = Point{-20.839952, -40.733812}
	circP2 = Point{-20.831823, -40.722282}
	circP3 = Point{-20.830522, -40.72332}

	// Boarding points on the beach avenue, shared by both itineraries.
	stopOeste  = Point{-20.839103, -40.732688}
	stopCentro = Point{-20.836122, -40.72846}
	stopNorte  = Point{-20.833141, -40.724233}

	// Past the Pronto Atendimento Municipal (s-pronto-atendimento, open 24/7), off L1's loop.
	byHospital = Point{-20.8362, -40.7358}
)

// Scripted sound levels at the meter, dB(A).
const (
	musicDB = 54 // lawful music (see above)
	loudDB  = 80 // the scripted loud pass
	// The scripted loud boarding: an emission (70 dB(A) over 5 s) for 15 s, too short to take the
	// 60 s level estimated at 7.5 m over even the night limit of the beach's area (55 + 1 dB)
	// for the 60 s noise_limit needs.
	boardingDB = 74
	parkedDB   = 40 // engine off in the garage
	// The scripted heeded warning: music at 74 dB(A) for 15 s on L1's loop within the coach's
	// lead distance of the Pronto Atendimento (400 m from it, outside its 200 m radius and the
	// demonstration's NBR zone), then lowered to musicDB — too short for the 60 s noise_limit
	// needs anywhere.
	heededDB = 74
)

// DemoServiceEnd is when, after the start of the demonstration, the service hours of the
// demonstration settings end (rounded up to the minute); DemoGrace is their grace.
const (
	DemoServiceEnd = 16 * time.Minute
	DemoGrace      = 2 * time.Minute
)

// DemoEvent is one scripted violation: which vehicle, from which offset, and the episodes
// (rule ids, in the order they start) that it must open — and no others. At is the offset
// from the start of the script: where the leg marked Mark begins, or for the late return the
// moment the vehicle becomes late (the end of the service hours, rounded up to the minute, is
// up to a minute later).
type DemoEvent struct {
	Mark    string
	At      time.Duration
	Vehicle string
	Rules   []string
	What    string // for people: pt-BR is for the UI; this is for the README and the logs
}

// DemoEvents are the scripted violations, in the order they happen.
var DemoEvents = []DemoEvent{
	{Mark: "speeding", At: 63 * time.Second, Vehicle: "PIU-001", Rules: []string{"speed"},
		What: "PIU-001 drives at 45 km/h for 30 s on the beach avenue (tachograph speed; limit 30 + 7 km/h)"},
	{Mark: "expired-inspection", At: 150 * time.Second, Vehicle: "PIU-003", Rules: []string{"document_expired"},
		What: "PIU-003, whose inspection (vistoria) expired 11 days ago, leaves its garage and serves its circuit"},
	{Mark: "detour", At: 3 * time.Minute, Vehicle: "PIU-002", Rules: []string{"route_deviation", "sensitive_zone_sound", "noise_limit"},
		What: "PIU-002 leaves its loop and drives past the Pronto Atendimento (open 24 h) with music at 80 dB(A) at the meter"},
	{Mark: "tacho-silent", At: 7*time.Minute + 27*time.Second, Vehicle: "PIU-001", Rules: []string{"telemetry_fault"},
		What: "PIU-001's tachograph sends nothing for 90 s while it drives its loop's inland street at 22 km/h"},
	{Mark: "loud-boarding", At: 9*time.Minute + 9*time.Second, Vehicle: "PIU-003", Rules: []string{"boarding_sound"},
		What: "PIU-003 plays music at 74 dB(A) for 15 s while stopped at the Orla Oeste boarding point"},
	{Mark: "late", At: DemoServiceEnd + DemoGrace, Vehicle: "PIU-001", Rules: []string{"hours"},
		What: "PIU-001 starts a second lap and is still in service more than the grace after the end of the service hours"},
}

// DemoWarning is a scripted warning of the driver's coach, given where the bridge runs with the
// monitor's configuration bundle (make run pins the monitor's key in its bridges): which
// vehicle, from which marked leg, about which sensitive site, and whether the driver heeds it.
// A heeded warning is followed by no episode of its rule; an ignored one by the episode its
// DemoEvent lists, whose draft states the warning.
type DemoWarning struct {
	Mark    string
	Vehicle string
	Kind    string // the coach's kind of warning (coach.KindSiteSound, …)
	Rule    string // the rule it anticipates
	Site    string // the sensitive site's geofence id
	Heeded  bool
	What    string
}

// DemoWarnings are the scripted site warnings: one heeded, one ignored. The coach warns of
// other things too on the demonstration day (the speeding, the detour off the itinerary, the
// end of the service hours, PIU-003's expired inspection); these two are the ones the script
// is built to show.
var DemoWarnings = []DemoWarning{
	{Mark: "heeded", Vehicle: "PIU-001", Kind: "site_sound", Rule: "sensitive_zone_sound", Site: "s-pronto-atendimento", Heeded: true,
		What: "PIU-001 turns its music up to 74 dB(A) on its loop 400 m from the Pronto Atendimento; warned, the driver lowers it 15 s later: no episode"},
	{Mark: "loud-approach", Vehicle: "PIU-002", Kind: "site_sound", Rule: "sensitive_zone_sound", Site: "s-pronto-atendimento", Heeded: false,
		What: "PIU-002 plays music at 80 dB(A) from 360 m before the Pronto Atendimento; warned, the driver keeps it loud and drives past it (the detour): the sensitive_zone_sound episode's draft states the warning"},
}

// DemoVehicle is a scripted vehicle of the demonstration and the driver card in its tachograph.
type DemoVehicle struct {
	ID     string
	Card   string
	Script *Script
}

// Demo returns the scripted vehicles of the demonstration day.
func Demo() []DemoVehicle {
	music := func(to Point, kmh float64) Leg { return Leg{To: to, Kmh: kmh, DB: musicDB} }
	board := func(at Point) []Leg {
		return []Leg{{To: at, Kmh: 20, DB: musicDB}, {Stop: 40 * time.Second, DB: musicDB, Door: true}}
	}
	join := func(parts ...[]Leg) []Leg {
		var out []Leg
		for _, p := range parts {
			out = append(out, p...)
		}
		return out
	}
	// The rest of a lap of L1's loop along the beach with stops, back to A.
	lap := func(stops ...Point) []Leg {
		var legs []Leg
		for _, s := range stops {
			legs = append(legs, board(s)...)
		}
		return append(legs, music(loopB, 20), music(loopC, 20), music(loopD, 22), music(loopE, 20), music(loopA, 20))
	}
	// The first lap's inland street with the tachograph silent for 90 s, and on its way back
	// to A the heeded warning: loud for 15 s (83 m at 20 km/h), then lawful again.
	firstLap := lap(stopCentro, stopNorte)
	firstLap = append(firstLap[:len(firstLap)-1:len(firstLap)-1], music(along(loopE, loopA, 20), 20),
		Leg{To: along(loopE, loopA, 103), Kmh: 20, DB: heededDB, Mark: "heeded"}, music(loopA, 20))
	for i, l := range firstLap {
		if l.To == loopD {
			silent := []Leg{music(along(loopC, loopD, 250), 22),
				{To: along(loopC, loopD, 800), Kmh: 22, DB: musicDB, TachoSilent: true, Mark: "tacho-silent"},
				music(loopD, 22)}
			firstLap = append(firstLap[:i:i], append(silent, firstLap[i+1:]...)...)
			break
		}
	}
	piu001 := &Script{Start: garageL1, IdleDB: parkedDB, Legs: join(
		[]Leg{{Until: 10 * time.Second, DB: parkedDB, SwitchOff: true}, music(loopA, 30)},
		// Past the Orla Oeste stop at 45 km/h: the speeding.
		[]Leg{{To: along(loopA, loopB, 400), Kmh: 45, DB: musicDB, Mark: "speeding"}},
		firstLap, // the rest of the first lap
		// The second lap starts within the hours and ends after them: the late return.
		[]Leg{{To: along(loopA, stopOeste, 100), Kmh: 20, DB: musicDB, Mark: "late"}},
		lap(stopOeste, stopCentro, stopNorte),
		[]Leg{music(garageL1, 30)},
	)}
	piu002 := &Script{Start: garageL1b, IdleDB: parkedDB, Legs: join(
		[]Leg{{Until: 60 * time.Second, DB: parkedDB, SwitchOff: true}, music(loopA, 30), music(loopE, 20),
			// Loud from 40 m after E (360 m from the Pronto Atendimento, within the coach's lead
			// distance): the warning the driver ignores.
			music(along(loopE, loopD, 40), 20), {To: loopD, Kmh: 20, DB: loudDB, Mark: "loud-approach"}},
		// The detour: off the loop, past the hospital, loud, and back to D.
		[]Leg{
			{To: along(loopD, byHospital, 90), Kmh: 15, DB: loudDB, Mark: "detour"},
			{To: byHospital, Kmh: 15, DB: loudDB},
			{To: along(loopD, byHospital, 90), Kmh: 15, DB: loudDB},
			music(loopD, 15),
		},
		[]Leg{music(loopC, 25), music(loopB, 25)},
		board(stopNorte), board(stopCentro), board(stopOeste),
		[]Leg{music(loopA, 25), music(garageL1b, 30)},
	)}
	piu003 := &Script{Start: garageL2, IdleDB: parkedDB, Legs: join(
		[]Leg{{Until: 150 * time.Second, DB: parkedDB, SwitchOff: true},
			{To: circP3, Kmh: 30, DB: musicDB, Mark: "expired-inspection"}, music(circP2, 20)},
		board(stopNorte), board(stopCentro),
		// At the Orla Oeste stop, 15 s of loud music while passengers board.
		[]Leg{music(stopOeste, 20), {Stop: 10 * time.Second, DB: musicDB, Door: true},
			{Stop: 15 * time.Second, DB: boardingDB, Mark: "loud-boarding", Door: true}, {Stop: 15 * time.Second, DB: musicDB, Door: true}},
		[]Leg{music(circP1, 20), music(circP2, 25), music(circP3, 25), music(garageL2, 30)},
	)}
	return []DemoVehicle{
		{ID: "PIU-001", Card: "0000000086H101", Script: piu001},
		{ID: "PIU-002", Card: "0000000091K202", Script: piu002},
		{ID: "PIU-003", Card: "0000000077B303", Script: piu003},
	}
}

// along returns the point m metres from a towards b.
func along(a, b Point, m float64) Point {
	f := m / distance(a, b)
	return Point{a.Lat + (b.Lat-a.Lat)*f, a.Lon + (b.Lon-a.Lon)*f}
}
