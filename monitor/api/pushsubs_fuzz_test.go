package api

import (
	"net/url"
	"testing"
	"unicode/utf8"

	"github.com/trenzinho/trenzinho/monitor/notify/webpush"
)

// FuzzCheckPushSub: a subscription body is untrusted; whatever it holds, checkPushSub never
// panics, and what it accepts is bounded: an https endpoint of at most MaxEndpoint characters
// without user information, keys of the right sizes, a short label; the document it builds is
// one webpush.ParseSubscription reads back with the same endpoint (unless the point is off
// the curve, which the directory refuses).
func FuzzCheckPushSub(f *testing.F) {
	f.Add("https://fcm.googleapis.com/fcm/send/x", "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4", "BTBZMqHH6r4Tts7J_aSIgg", "Android · Chrome")
	f.Add("http://127.0.0.1:8086/write", "AAAA", "BTBZMqHH6r4Tts7J_aSIgg==", "")
	f.Add("https://u:p@fcm.googleapis.com/", "BCVxsr7N_eNgVRqvHtD0zTZsEc6-VV-JvLexhqUzORcxaOzi6-AYWXvTBHm4bjyPjs7Vd8pZGH6SRpkNtoIAiw4=", "BTBZMqHH6r4Tts7J_aSIg", "a\x00b")
	f.Fuzz(func(t *testing.T, endpoint, p256dh, auth, label string) {
		var in pushSubBody
		in.Subscription.Endpoint, in.Subscription.Keys.P256dh, in.Subscription.Keys.Auth, in.Label = endpoint, p256dh, auth, label
		doc, lbl, probs := checkPushSub(in)
		if len(probs) > 0 {
			return
		}
		u, err := url.Parse(endpoint)
		if err != nil || u.Scheme != "https" || u.User != nil || len(endpoint) > webpush.MaxEndpoint || utf8.RuneCountInString(lbl) > maxPushLabel {
			t.Fatalf("accepted %q label %q", endpoint, lbl)
		}
		sub, _, a, err := webpush.ParseSubscription(doc)
		if err == nil && (sub.Endpoint != endpoint || len(a) != 16) {
			t.Fatalf("document %s reads back as %+v", doc, sub)
		}
	})
}
