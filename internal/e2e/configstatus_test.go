package e2e

import (
	"encoding/json"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/trenzinho/trenzinho/wire"
)

// publishStatus publishes a retained status of vehicle saying it runs configuration bundle
// configVersion (0: none), as a bridge would.
func publishStatus(t *testing.T, url, vehicle string, configVersion uint64) {
	t.Helper()
	c := mqtt.NewClient(mqtt.NewClientOptions().AddBroker(url).SetClientID("dash-status-" + vehicle))
	if tok := c.Connect(); !tok.WaitTimeout(30*time.Second) || tok.Error() != nil {
		t.Fatalf("publisher: %v", tok.Error())
	}
	defer c.Disconnect(100)
	now := wire.NewTime(time.Now())
	p, _ := json.Marshal(wire.Status{Online: true, Version: "test", Devices: map[string]string{"gps": wire.DeviceOK},
		T: &now, ConfigVersion: configVersion})
	if tok := c.Publish(wire.StatusTopic(vehicle), 1, true, p); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("status of %s: %v", vehicle, tok.Error())
	}
}
