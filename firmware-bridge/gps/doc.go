// Package gps decodes the NMEA 0183 output of a GPS receiver into position epochs
// (wire.GPS readings) for the firmware bridge.
//
// # Sentences
//
// The decoder reads RMC, GGA, VTG, GSA and ZDA sentences from any talker (GP, GN, GL, GA,
// GB, BD, QZ, …). GLL and GNS sentences are not decoded, but their time marks the epoch
// they belong to. Every other sentence (GSV, GST, proprietary $P… sentences, …) is counted
// in Stats.Unknown and otherwise ignored.
//
// A sentence is the text from a '$' to the end of its line or to the next '$'; bytes before
// the first '$' of a line are counted as garbage, so a sentence glued to binary noise (a
// receiver switching protocols, a port opened mid-byte) is still found. Lines longer than
// MaxLineLength bytes are dropped whole. Lines starting with '#' are comments (the
// convention of gpsd's capture files).
//
// # Checksums
//
// A sentence is accepted only if it ends in "*hh" and hh (upper or lower case hexadecimal)
// is the XOR of the bytes between '$' and '*'. Sentences without a checksum are counted in
// Stats.NoChecksum and dropped, unless Decoder.AcceptNoChecksum is set. This is stricter
// than gpsd, which accepts any sentence without '*': a sentence cut short by a power cut or
// a serial overrun has no checksum either, and "…,W,0." read as a complete RMC would turn
// a speed of 0.5 knots into 0. Every receiver in the conformance corpus (and every
// NMEA 0183 2.0+ receiver) sends checksums, so the stricter rule loses nothing there;
// AcceptNoChecksum exists for old receivers that do not. A sentence whose checksum is
// right but whose fields cannot be read (a latitude of 95°, a status of "X", a number
// such as "1e5" or "NaN") is counted in Stats.Malformed and ignored as a whole.
//
// # Epochs
//
// A receiver reports each position fix (an epoch) as a burst of sentences sharing one UTC
// time of day. The decoder groups consecutive sentences by that time: a sentence with a
// time (RMC, GGA, ZDA, GLL, GNS) whose time differs from the current epoch's completes the
// current epoch and starts the next one; sentences without a time (VTG, GSA) belong to the
// current epoch. So an epoch is completed when the next one begins (or by Flush), and
// Decoder.Line returns it then. An RMC or GGA whose time field is empty (a receiver
// without a fix) starts an epoch of its own that never yields a position.
//
// A completed epoch becomes one reading, merged from its sentences. When several talkers
// report the same sentence type in one epoch (GPGGA and GLGGA), the combined talker GN is
// preferred, otherwise the first one received.
//
//   - Position: from the RMC, or from the GGA when the epoch has no RMC (receivers set up
//     for GGA+VTG+ZDA). Latitude and longitude are degrees + minutes/60 as float64,
//     unrounded.
//   - Time: the epoch's time of day on the date of its RMC, else of its ZDA, else the date
//     of the last dated epoch, moved one day on when the time of day falls back by more
//     than 12 hours (midnight rollover). An epoch whose date is unknown is counted in
//     Stats.Undated and dropped. Times are UTC, truncated to the millisecond. (Only a
//     receiver that sends neither RMC nor ZDA depends on the carried date, and only a
//     silence of more than a day could make it wrong.)
//   - Speed: the RMC speed in knots × 1.852 (exactly), else the VTG speed in km/h, else the
//     VTG speed in knots × 1.852.
//   - Course: the RMC true course, else the VTG true course.
//   - HDOP, satellites in use and altitude above mean sea level: from the GGA (HDOP from the
//     GSA when the GGA has none).
//   - Fix: "estimated" when the RMC mode is E or the GGA quality is 6 (dead reckoning);
//     else "rtk" for GGA quality 4 or 5 (or RMC mode R or F); else "dgps" for GGA quality 2
//     (or RMC mode D); else "3d" or "2d" from the GSA mode; else unknown.
//
// A value the receiver does not report is omitted (a nil pointer, an empty Fix), never
// zero: an empty field, an HDOP of 0 or a satellite count of 0 is unknown.
//
// # Invalid fixes
//
// An epoch is an invalid fix, counted once in Stats.InvalidFixes and never a position,
// when its RMC has status V or mode N (not valid), M (manual input) or S (simulator), when
// its GGA has quality 0 (no fix), 7 (manual input) or 8 (simulator), or when it claims a
// fix but carries no usable position. One invalid sentence is enough: an epoch whose RMC
// says A while its GGA says 0 is invalid. The mode of a VTG and the navigational status
// that NMEA 4.1 appends to the RMC (u-blox always sends V there) are not used. Dead-reckoned
// epochs are positions marked "estimated", which the monitor never takes as evidence.
//
// # Conformance
//
// The tests decode the gpsd project's regression captures (testdata/gpsd, with their origin
// and licence in its README.md) and compare the readings with the positions and speeds gpsd
// reported at the same times.
package gps
