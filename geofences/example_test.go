package geofences_test

import (
	"fmt"
	"log"
	"time"

	"github.com/paulmach/orb"
	"github.com/trenzinho/trenzinho/geofences"
)

func ExampleParseOpeningHours() {
	o, err := geofences.ParseOpeningHours("Mo-Fr 07:00-12:00,13:00-22:00; PH off")
	if err != nil {
		log.Fatal(err)
	}
	brt := time.FixedZone("BRT", -3*3600)
	friday := time.Date(2026, 11, 27, 19, 30, 0, 0, brt)
	fmt.Println(o.Open(friday, false))
	fmt.Println(o.Open(friday, true)) // a holiday
	fmt.Println(o.Open(friday.Add(-7*time.Hour), false))
	// Output:
	// true
	// false
	// false
}

func ExampleSet_SensitiveWithin() {
	s, err := geofences.Sample()
	if err != nil {
		log.Fatal(err)
	}
	p := orb.Point{-40.72908, -20.83459} // on the street behind the beach avenue
	for _, h := range s.SensitiveWithin(p, 200) {
		fmt.Printf("%s %s %.0f m verified=%v\n", h.Feature.Category, h.Feature.ID, h.DistanceM, h.Feature.Verified())
	}
	if z, ok := s.ZoneAt(p); ok {
		fmt.Println("zone:", z.Area)
	}
	in, d := s.InCorridor(p, s.Itineraries("L1"))
	fmt.Printf("in L1's corridor: %v (%.0f m)\n", in, d)
	// Output:
	// church s-igreja-orla 119 m verified=false
	// public_office s-prefeitura 164 m verified=false
	// school s-escola-centro 172 m verified=false
	// zone: mixed_commercial
	// in L1's corridor: true (1 m)
}
