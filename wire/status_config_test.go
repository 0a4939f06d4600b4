package wire

import "testing"

func TestStatusConfigVersion(t *testing.T) {
	s, err := DecodeStatus([]byte(`{"online":true,"config_version":12}`))
	if err != nil || s.ConfigVersion != 12 || s.OfflineOnly() {
		t.Fatalf("%+v %v", s, err)
	}
	if _, err := DecodeStatus([]byte(`{"online":true,"config_version":9223372036854775808}`)); err == nil {
		t.Error("config_version above 2^63-1 accepted")
	}
}
