// Package slm reads sound-level meters and aggregates their samples into the one-second
// wire.Sound readings of the trenzinho wire format: L_Aeq, the energy average of the
// samples, and L_AFmax, the largest sample.
//
// Two kinds of meter are supported, named by [Protocol]:
//
//   - "modbus-rtu": RS-485 noise transmitters polled with Modbus RTU function 03 (read
//     holding registers) through github.com/simonvetter/modbus, which opens its own serial
//     port. Defaults: 4800 baud 8N1, address 1, register 0, one register, level = value/10
//     dB. See [ModbusConfig] and [Poller]. A capture of such a line (the raw bytes of the
//     meter's responses) is decoded by [ModbusDecoder].
//   - "pce322a": meters that stream frames by themselves once started (PCE-322A style,
//     115200 baud 8N1). See [PCEDecoder] and [StartPCE].
//
// # PCE-322A layout
//
// The layout comes from public scripts, not from a PCE document, and has not been verified
// against hardware; it is a table of offsets (the pce… constants in pce.go), so that a field
// found elsewhere is a one-line fix. The meter starts streaming when sent AC FF; the scripts
// expect about ten frames a second, 13 bytes each, with neither length nor checksum:
//
//	offset  size  field
//	0       1     7F (start)
//	1       2     level, dB × 10, big-endian (accepted: 0.1–160.0 dB)
//	3       3     status, not decoded (scripts see 00 03 00 and 00 03 03)
//	6       6     meter clock, BCD: year − 2000, month, day, hour, minute, second;
//	              bit 7 of the hour byte is masked (its meaning is unknown);
//	              all six zero = no clock
//	12      1     trailer, not checked (scripts see 00)
//
// Without a checksum, a frame is recognised by its start byte, a level in range and a
// clock that is valid BCD and a real date (or all zero); anything else is garbage, and a
// frame cut short mid-stream shows up as garbage bytes too.
//
// The meter's clock has no time zone: the decoder reads it in a configured location.
//
// # Modbus RTU
//
// A response to the poller's request is address, 03, byte count (2 per register), the
// registers big-endian, and the CRC-16/MODBUS low byte first; an exception response is
// address, 83, exception code, CRC. [ModbusDecoder] finds responses in a byte stream,
// resynchronising after garbage; a response whose CRC fails is dropped and counted.
// [RTUResponder] answers requests the same way, for tests and the simulator.
//
// # Aggregation
//
// An [Aggregator] groups samples by the whole UTC second they fall in and emits one
// wire.Sound per second: T is the time of the second's first sample, L_Aeq is
// 10·log10(Σ tᵢ·10^(Lᵢ/10) / Σ tᵢ) over its samples, each weighing 1/rate seconds (never an
// arithmetic mean of decibels), L_AFmax is its largest sample, and DurS the duration the
// samples cover: n/rate, at most one second. A configured offset (calibration, in dB) is
// added to every sample first.
//
// Samples are timed by the meter's own clock where its frames carry one (to the second:
// all samples of a meter second fall in that second); otherwise from a start time and the
// sample rate, sample i at start + i/rate.
package slm
