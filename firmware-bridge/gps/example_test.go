package gps_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/trenzinho/trenzinho/firmware-bridge/gps"
)

// A serial reader feeds the decoder line by line and sends each completed epoch on.
func ExampleDecoder() {
	port := strings.NewReader("" +
		"$GPGGA,202640.000,4404.1306,N,12118.8515,W,2,10,0.98,1127.7,M,-19.6,M,0000,0000*6C\r\n" +
		"$GPGSA,A,3,20,16,09,03,07,10,23,19,27,30,,,1.64,0.98,1.31*05\r\n" +
		"$GPRMC,202640.000,A,4404.1306,N,12118.8515,W,0.03,225.97,130415,,,D*73\r\n" +
		"$GPZDA,202640.000,13,04,2015,,*54\r\n" +
		"$GPRMC,202641.000,V,,,,,,,130415,,,N*4C\r\n")

	var d gps.Decoder
	sc := bufio.NewScanner(port)
	sc.Split(gps.ScanLines)
	for sc.Scan() {
		for _, g := range d.Line(sc.Bytes()) {
			b, _ := json.Marshal(g)
			fmt.Println(string(b))
		}
	}
	for _, g := range d.Flush() {
		b, _ := json.Marshal(g)
		fmt.Println(string(b))
	}
	s := d.Stats()
	fmt.Println("readings", s.Readings, "invalid fixes", s.InvalidFixes)
	// Output:
	// {"t":"2015-04-13T20:26:40Z","lat":44.068843333333334,"lon":-121.31419166666667,"speed_kmh":0.05556,"course_deg":225.97,"hdop":0.98,"sats":10,"fix":"dgps","alt_m":1127.7}
	// readings 1 invalid fixes 1
}
