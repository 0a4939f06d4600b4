// The installable dashboard: registers the service worker (sw.js: the app shell for offline
// use, never the API's personal data). A browser without service workers (or a page not served
// over HTTPS or from localhost) runs the dashboard as before, without installation.

export async function registerServiceWorker() {
  if (!("serviceWorker" in navigator) || !window.isSecureContext) return null;
  try {
    return await navigator.serviceWorker.register("/sw.js", { scope: "/" });
  } catch (e) {
    console.warn("service worker não registrado:", e.message);
    return null;
  }
}
