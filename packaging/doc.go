// Package packaging holds no Go code for the programs: it is the home of the Raspberry Pi
// packaging of firmware-bridge, and of the tests that check it (go test ./packaging/).
//
//	build-deb.sh                    assembles the trenzinho-bridge .deb (make pi calls it)
//	deb/trenzinho-bridge.service    the hardened systemd unit
//	deb/bridge.env                  /etc/trenzinho/bridge.env, the settings (a conffile)
//	deb/70-trenzinho-bridge.rules   udev rules: /dev/trenzinho-gps, -tacho, -slm
//	deb/postinst, prerm, postrm     maintainer scripts
//
// The tests cross-compile the bridge for arm64 and armv7, run both builds under qemu-user
// (Debian package qemu-user-static) to check that they decode the gpsd NMEA corpus byte for
// byte as the native build does, and check the packages' contents, the unit, the settings
// file, the udev rules and the maintainer scripts. docs/bridge.md is the installer's guide.
package packaging
