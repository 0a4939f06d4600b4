// The driver's coach page: the warnings in force, big, refreshed every half second from the
// bridge (state.json). Plain DOM, no dependency: it runs on the Pi's kiosk browser offline.
const alertas = document.getElementById('alertas');
const calmo = document.getElementById('calmo');
const rodape = document.getElementById('rodape');

function render(st) {
  alertas.replaceChildren(...st.active.map((a) => {
    const d = document.createElement('div');
    d.className = 'alerta ' + a.kind;
    d.dataset.kind = a.kind;
    d.textContent = a.text;
    return d;
  }));
  calmo.hidden = st.active.length > 0;
  rodape.textContent = st.config_version > 0
    ? `Configuração v${st.config_version} · ${st.warnings} alerta(s) emitido(s)`
    : 'SEM CONFIGURAÇÃO DO MONITOR — alertas desligados';
}

async function refresh() {
  try {
    const r = await fetch('state.json', { cache: 'no-store' });
    if (r.ok) {
      render(await r.json());
    } else {
      rodape.textContent = 'Sistema embarcado indisponível';
    }
  } catch {
    rodape.textContent = 'Sistema embarcado indisponível';
  }
  setTimeout(refresh, 500);
}

refresh();
