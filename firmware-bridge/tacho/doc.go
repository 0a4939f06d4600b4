// Package tacho decodes the D8 serial data output of digital tachographs into wire.Tacho
// readings, and encodes D8 frames for tests and the simulator.
//
// Two layouts are known, named by [Layout]:
//
//   - "vdo": VDO (Continental) DTCO, 10400 baud 8N1, one frame a second. The layout comes
//     from public reverse engineering (the tachograph_d8 project), not from a VDO document.
//   - "stoneridge": Stoneridge SE5000, 1200 baud 8N1. The layout follows Stoneridge's
//     "SE5000 D8 Serial Data Output" document as summarised publicly; where that summary is
//     silent, the choices below are this package's own.
//
// Neither layout has been verified against hardware. Each is a table of byte offsets (the
// vdo… and sr… constants in vdo.go and stoneridge.go), so that a field found elsewhere on a
// real device is a one-line fix.
//
// # VDO layout
//
// Multi-byte numbers are little-endian.
//
//	offset  size  field
//	0       5     "UDTCO" (sync)
//	5       1     reserved (0)
//	6       1     UTC seconds, 0.25 s/bit (0–239)
//	7       1     UTC minutes (0–59)
//	8       1     UTC hours (0–23)
//	9       1     month (1–12)
//	10      1     day, 0.25 day/bit: 0 = no date; day 1 is 1–4 (the quarter is hour/6)
//	11      1     year − 1985
//	12      1     local minute offset + 125
//	13      1     local hour offset + 125
//	14      1     working states
//	15      1     driver 1 states
//	16      1     driver 2 states
//	17      1     system events
//	18      2     speed, 1/256 km/h
//	20      4     total distance (odometer), 5 m/bit
//	24      4     trip distance, 5 m/bit
//	28      2     K-factor
//	30      4     not decoded
//	34      1+n   VIN: length byte, then n bytes (n ≤ 32)
//	…       1+n   custom string: length byte, then n bytes (n ≤ 64)
//	…       1+n   driver 1 card: length byte (0 = no card), then card type, issuing
//	              state and card number (n ≤ 32; n = 1 is malformed)
//	…       1+n   driver 2 card, as driver 1
//	last    1     checksum: XOR of every earlier byte of the frame
//
// With a 17-byte VIN and a 14-byte custom string a frame is 70, 88 or 106 bytes long with 0,
// 1 or 2 cards (a card field is 18 bytes: type, state and a 16-character card number).
// The length limits are this package's: a longer field marks the header as malformed.
//
// # Stoneridge layout
//
// Multi-byte numbers are big-endian ("MSB first").
//
//	offset  size  field
//	0       3     FF FF FF (sync)
//	3       1     length L, 45–48: the bytes from this one through the checksum
//	4       1     message id: 0x01 VIN, 0x02 DIN1, 0x04 DIN2, 0x08 VRN
//	5       4     UTC time, seconds since 1970-01-01 (the TimeReal of the tachograph
//	              data dictionary); 0 or FFFFFFFF = no time            [our choice]
//	9       1     working states
//	10      1     driver 1 states
//	11      1     driver 2 states
//	12      1     system events
//	13      2     speed, 1/256 km/h                                    [unit: our choice]
//	15      4     total distance (odometer), 5 m/bit                   [our choice]
//	19      4     trip distance, 5 m/bit                               [our choice]
//	23      2     K-factor                                             [our choice]
//	25      5     reserved, not decoded                                [our choice]
//	30      L−28  payload of the message id: VIN (17 bytes); DIN1/DIN2: issuing nation
//	              (3 bytes) then the card number (16 bytes), first byte FF = no card,
//	              trailing FF = fill; VRN: as sent
//	3+L−1   1     checksum: two's complement of the sum of bytes 3 … 3+L−2, so that the
//	              bytes from the length through the checksum sum to 0 (mod 256)
//
// The sync, length range, message ids, the positions of the states, speed and payload and
// the checksum follow the public summary; the rest is marked above. A Stoneridge frame names
// a driver card only in its DIN1 message: readings of the other messages carry no card.
//
// # Decoding
//
// A [Decoder] is fed the bytes as they arrive from the serial port, in chunks of any size.
// It looks for a frame header, skips what is not one (garbage), and decodes a frame only when
// it is whole and its checksum holds; a frame with a bad checksum, one cut short by the next
// header or by the end of the stream, and one whose header is malformed are dropped and
// counted in [Stats], never decoded.
//
// Readings take their time from the frame's UTC time (to the quarter second for VDO, the
// second for Stoneridge). A frame without a valid time (VDO: day 0, month 0, a field out of
// range or a date that does not exist; Stoneridge: 0 or FFFFFFFF) still yields a reading,
// with a zero T and Reading.TimeValid false, counted in Stats.NoTime: the caller times it by
// its receive clock (and such a time is not the tachograph's). A zero wire.Time cannot be
// marshalled, so a caller that prints such readings must omit "t".
//
// Speeds above 250.996 km/h (raw above 0xFAFF) and distances above 0xFAFFFFFF are the J1939
// "error" and "not available" values: the reading omits them.
package tacho
