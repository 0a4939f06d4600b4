package e2e

import (
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
)

// phoneWidth, phoneHeight are a phone's viewport in CSS pixels (a 6.1" phone, portrait).
const phoneWidth, phoneHeight = 390, 844

// TestProfileBannerOnAPhone: on a phone, the admin's banner of the legal profile's warnings is
// one line, well under a tenth of the screen, that covers nothing and can be dismissed for the
// session (a reload keeps it away); a fiscal never sees it; the Perfil legal page lists the
// warnings; and nothing on either page is wider than the phone. Screenshots go to
// test-artifacts/ (TRENZINHO_ARTIFACTS), the sizes are asserted.
func TestProfileBannerOnAPhone(t *testing.T) {
	if os.Getenv("TRENZINHO_ARTIFACTS") == "" {
		t.Setenv("TRENZINHO_ARTIFACTS", "test-artifacts")
	}
	chrome := chromiumPath(t)
	bin := testenv.Build(t)
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{})
	mon := startMonitor(t, bin, broker.URL()) // the built-in profile: warnings for the admin
	if code, body := mon.postJSON(t, "/api/v1/users", map[string]string{"name": "fiscal", "password": "senha-de-teste-longa", "role": "fiscal"}); code != 201 {
		t.Fatalf("create the fiscal: %d %s", code, body)
	}
	b := startDashBrowser(t, chrome, phoneWidth, phoneHeight)
	b.do(chromedp.EmulateViewport(phoneWidth, phoneHeight, chromedp.EmulateMobile, chromedp.EmulateScale(3)))

	// The admin: one line at the top of the content.
	b.phoneLogin(mon.base, "admin", "segredo-de-teste")
	b.waitJS(`document.querySelector("#profile-warnings") !== null`, 10*time.Second, "the profile banner for the admin")
	b.shot("01-phone-admin-banner")
	banner := b.rect("#profile-warnings")
	text := b.rect("#profile-warnings .profile-warnings-text")
	lineHeight := b.evalFloat(`parseFloat(getComputedStyle(document.querySelector("#profile-warnings .profile-warnings-text")).lineHeight) || 18`)
	t.Logf("banner %.0f×%.0f at y=%.0f (text %.0f high, line %.1f); viewport %d×%d", banner.Width, banner.Height, banner.Top,
		text.Height, lineHeight, phoneWidth, phoneHeight)
	if text.Height > 1.5*lineHeight {
		t.Errorf("the banner's text is %.0f px high, more than one line of %.1f px", text.Height, lineHeight)
	}
	if banner.Height >= 0.1*phoneHeight {
		t.Errorf("the banner is %.0f px high, %.1f%% of the phone's %d px (want under 10%%)", banner.Height, 100*banner.Height/phoneHeight, phoneHeight)
	}
	if banner.Left < 0 || banner.Right > phoneWidth {
		t.Errorf("the banner spans x %.0f…%.0f, outside the phone's %d px", banner.Left, banner.Right, phoneWidth)
	}
	// It covers nothing: the element at its centre is the banner itself, and the view's content
	// starts below it.
	if !b.evalBool(`(() => { const r = document.querySelector("#profile-warnings").getBoundingClientRect();
		const e = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
		return e && e.closest("#profile-warnings") !== null; })()`) {
		t.Error("something covers the banner")
	}
	if view := b.rect("#main > .view:not([hidden])"); view.Top < banner.Bottom {
		t.Errorf("the view starts at y=%.0f, under the banner (bottom %.0f)", view.Top, banner.Bottom)
	}
	b.noneWiderThanThePhone("the map with the banner")

	// Dismissed, it stays away for the session, reload included.
	b.do(chromedp.Click(chromedp.CSS("#profile-warnings-dismiss")))
	b.waitJS(`document.querySelector("#profile-warnings") === null`, 5*time.Second, "the banner dismissed")
	b.do(chromedp.Reload())
	b.waitJS(`!document.querySelector("#app").hidden && document.querySelector("#user-name").textContent === "admin"`, 20*time.Second, "the dashboard after a reload")
	if b.evalBool(`document.querySelector("#profile-warnings") !== null`) {
		t.Error("the dismissed banner is back after a reload")
	}
	b.shot("02-phone-admin-without-banner")
	b.noneWiderThanThePhone("the map without the banner")

	// The Perfil legal page still lists every warning.
	b.do(chromedp.Navigate(mon.base + "/#/perfil-legal"))
	b.waitJS(`document.querySelectorAll("#profile-warnings-list .profile-warning-items li").length > 0`, 10*time.Second, "the profile's warnings")
	n := b.evalFloat(`document.querySelectorAll("#profile-warnings-list .profile-warning-items li").length`)
	if !b.evalBool(`[...document.querySelectorAll("#profile-warnings-list li")].every((li) => li.textContent.includes("Corrige:"))`) {
		t.Error("a warning of the Perfil legal page does not say which keys fix it")
	}
	t.Logf("Perfil legal: %v warnings", n)
	b.shot("03-phone-perfil-legal")
	b.noneWiderThanThePhone("the Perfil legal page")

	// A fiscal never sees it, in a fresh session too.
	b.do(chromedp.Evaluate[chromedp.Void](`sessionStorage.clear()`))
	b.do(chromedp.Evaluate[chromedp.Void](`document.querySelector("#logout").click()`))
	b.waitJS(`!document.querySelector("#login-view").hidden`, 20*time.Second, "the login page after logging out")
	b.phoneLogin(mon.base, "fiscal", "senha-de-teste-longa")
	b.waitJS(`document.querySelector("#user-name").textContent === "fiscal"`, 10*time.Second, "the fiscal's dashboard")
	if b.evalBool(`document.querySelector("#profile-warnings") !== null`) {
		t.Error("the fiscal sees the legal profile's banner")
	}
	b.shot("04-phone-fiscal")
	b.noneWiderThanThePhone("the fiscal's map")
	b.checkConsole()
}

// phoneLogin logs in through the login form and waits for the dashboard.
func (b *dashBrowser) phoneLogin(base, user, password string) {
	b.t.Helper()
	b.do(chromedp.Navigate(base + "/"))
	b.waitJS(`!document.querySelector("#login-view").hidden`, 20*time.Second, "the login page")
	b.do(chromedp.SendKeys(chromedp.CSS("#login-user"), user), chromedp.SendKeys(chromedp.CSS("#login-password"), password),
		chromedp.Click(chromedp.CSS("#login-submit")))
	b.waitJS(`!document.querySelector("#app").hidden`, 20*time.Second, "the dashboard")
}

// domRect is an element's getBoundingClientRect, in CSS pixels.
type domRect struct{ Left, Top, Right, Bottom, Width, Height float64 }

func (b *dashBrowser) rect(sel string) domRect {
	b.t.Helper()
	r, err := chromedp.Run(b.ctx, chromedp.Evaluate[domRect](`(() => { const r = document.querySelector(`+jsString(sel)+`).getBoundingClientRect();
		return {Left: r.left, Top: r.top, Right: r.right, Bottom: r.bottom, Width: r.width, Height: r.height}; })()`))
	if err != nil {
		b.t.Fatalf("rect of %s: %v", sel, err)
	}
	return r
}

// noneWiderThanThePhone fails the test when the page scrolls sideways or a visible element of
// the application (the off-screen menu aside) reaches past the phone's width.
func (b *dashBrowser) noneWiderThanThePhone(what string) {
	b.t.Helper()
	wide := b.evalString(`(() => {
		const w = document.documentElement.clientWidth, out = [];
		if (document.documentElement.scrollWidth > w + 1) out.push("the page scrolls to " + document.documentElement.scrollWidth + " px");
		for (const e of document.querySelectorAll("#main *")) {
			const r = e.getBoundingClientRect();
			if (r.width === 0 || r.height === 0 || e.closest(".leaflet-pane, .leaflet-control-container")) continue;
			let clipped = false;
			for (let p = e.parentElement; p && p !== document.body; p = p.parentElement) {
				const s = getComputedStyle(p);
				if (s.overflowX !== "visible") { const pr = p.getBoundingClientRect(); if (pr.right <= w + 1) { clipped = true; break; } }
			}
			if (!clipped && (r.right > w + 1 || r.left < -1)) out.push((e.id ? "#" + e.id : e.tagName.toLowerCase() + "." + [...e.classList].join(".")) + " spans " + Math.round(r.left) + "…" + Math.round(r.right));
		}
		return out.slice(0, 10).join("; ");
	})()`)
	if wide != "" {
		b.shot("wide")
		b.t.Errorf("%s: wider than the phone's %d px: %s", what, phoneWidth, wide)
	}
}

// jsString quotes s as a JavaScript string literal.
func jsString(s string) string {
	q := []rune{'"'}
	for _, r := range s {
		if r == '"' || r == '\\' {
			q = append(q, '\\')
		}
		q = append(q, r)
	}
	return string(append(q, '"'))
}
