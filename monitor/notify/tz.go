package notify

import (
	"time"
	_ "time/tzdata" // America/Sao_Paulo on machines without zoneinfo
)

var saoPaulo = mustLoadLocation("America/Sao_Paulo")

func mustLoadLocation(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}
