/**
 * The page of `svc-webhooks dev`: one static document, shipped in the
 * package, with no build step and nothing fetched from elsewhere. It reads
 * the run's token from its own address and talks to the relay's /api: the
 * list as deliveries arrive (Server-Sent Events), a delivery's detail,
 * replays and sends. What it shows of a delivery is set as text, never as
 * markup; and its policy lets only its own script and style run, named by
 * their hashes, so that markup let in by mistake would run nothing.
 */
import { createHash } from 'node:crypto';

const STYLE = `
  body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1d1d1f; background: #fafafa; }
  header { padding: 12px 20px; background: #1d2a3a; color: #fff; }
  header h1 { font-size: 16px; margin: 0 0 4px; }
  header code { color: #cde; }
  main { display: grid; grid-template-columns: minmax(0, 5fr) minmax(0, 3fr); gap: 16px; padding: 16px 20px; }
  .scroll { overflow-x: auto; }
  section { background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: 12px; min-width: 0; }
  h2 { font-size: 15px; margin: 0 0 8px; }
  table { width: 100%; border-collapse: collapse; }
  th, td { text-align: left; padding: 4px 6px; border-bottom: 1px solid #eee; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; max-width: 9em; }
  tbody tr { cursor: pointer; }
  tbody tr:hover, tbody tr:focus { background: #eef4ff; outline: 2px solid #4a7bd0; outline-offset: -2px; }
  tbody tr[aria-selected="true"] { background: #dde8ff; }
  .bad { color: #b00020; font-weight: 600; }
  .good { color: #1b7f3b; font-weight: 600; }
  pre { background: #f4f4f6; padding: 8px; overflow: auto; max-height: 320px; margin: 4px 0 10px; white-space: pre-wrap; overflow-wrap: anywhere; }
  button { font: inherit; padding: 4px 10px; margin: 2px 4px 2px 0; }
  label { display: block; margin: 6px 0 2px; font-weight: 600; }
  textarea { width: 100%; box-sizing: border-box; font-family: ui-monospace, monospace; min-height: 90px; }
  .note { color: #555; font-size: 13px; }
  .below { margin-top: 16px; }
`;

const SCRIPT = `
(function () {
  var token = new URLSearchParams(location.search).get('token') || '';
  var deliveries = [];
  var selected = null;
  var byId = function (id) { return document.getElementById(id); };
  byId('webhook-url').textContent = location.origin + '/webhooks';

  function api(path, body) {
    var init = { headers: { authorization: 'Bearer ' + token } };
    if (body !== undefined) { init.method = 'POST'; init.headers['content-type'] = 'application/json'; init.body = JSON.stringify(body); }
    return fetch(path, init).then(function (response) {
      return response.json().then(function (json) { return { status: response.status, body: json }; });
    });
  }
  function say(text) { byId('status').textContent = text; }
  function receiverText(d) { return d.status !== undefined ? String(d.status) : (d.failure || ''); }
  function outcomeText(d) { return d.outcome ? d.outcome.outcome : (d.status !== undefined ? '(your code answered)' : ''); }
  function cell(row, text, className) { var td = document.createElement('td'); td.textContent = text; td.title = text; if (className) td.className = className; row.appendChild(td); }

  function renderList() {
    var body = byId('deliveries');
    body.textContent = '';
    deliveries.forEach(function (d) {
      var row = document.createElement('tr');
      row.tabIndex = 0;
      row.dataset.n = String(d.n);
      row.setAttribute('aria-selected', String(d.n === selected));
      cell(row, String(d.n) + (d.replayOf ? ' ↻' + d.replayOf : d.source === 'send' ? ' sent' : ''));
      if (d.replayOf) row.firstChild.title = 'replay of ' + d.replayOf + ' (' + d.mode + ')';
      cell(row, new Date(d.receivedAt).toLocaleTimeString([], { hour12: false }));
      cell(row, d.event ? d.event.type : '');
      cell(row, d.event ? d.event.id : '');
      cell(row, d.outcome && d.outcome.tenant ? d.outcome.tenant : '');
      cell(row, d.valid ? 'valid' : (d.code || 'invalid'), d.valid ? 'good' : 'bad');
      cell(row, receiverText(d), d.status !== undefined && d.status < 300 ? 'good' : 'bad');
      cell(row, outcomeText(d));
      cell(row, String(d.latencyMs));
      body.appendChild(row);
    });
    byId('empty').hidden = deliveries.length > 0;
  }

  function shortened(name, value) {
    return name === 'webhook-signature' ? value.split(' ').map(function (one) { return one.length > 16 ? one.slice(0, 12) + '…' : one; }).join(' ') : value;
  }
  // A body is formatted only when small and shallow: indenting prints each line at its depth (a body of 48 KB
  // nested 4,000 deep prints to a gigabyte), and JSON.stringify recurses once a level. What is shown is cut.
  var FORMATTED_BYTES = 65536;
  var FORMATTED_DEPTH = 64;
  var SHOWN_CHARACTERS = 65536;
  function deeperThan(text, limit) {
    var depth = 0;
    var inString = false;
    for (var i = 0; i < text.length; i++) {
      var c = text[i];
      if (inString) { if (c === '\\\\') i++; else if (c === '"') inString = false; }
      else if (c === '"') inString = true;
      else if (c === '{' || c === '[') { if (++depth > limit) return true; }
      else if (c === '}' || c === ']') depth--;
    }
    return false;
  }
  function showBody(n, base64) {
    var bytes = Uint8Array.from(atob(base64), function (c) { return c.charCodeAt(0); });
    var text = new TextDecoder().decode(bytes);
    var notes = [];
    if (bytes.length <= FORMATTED_BYTES && !deeperThan(text, FORMATTED_DEPTH)) {
      try { text = JSON.stringify(JSON.parse(text), null, 2); } catch (e) { /* not JSON: shown as it came */ }
    } else notes.push('Shown as received: a body is formatted only up to 64 KiB and 64 levels deep.');
    if (text.length > SHOWN_CHARACTERS) {
      notes.push('Cut at 65,536 characters of ' + text.length + ': GET /api/deliveries/' + n + ' gives it whole.');
      text = text.slice(0, SHOWN_CHARACTERS);
    }
    byId('body').textContent = text;
    byId('body-note').textContent = notes.join(' ');
    byId('body-note').hidden = notes.length === 0;
  }

  function select(n) {
    selected = n;
    renderList();
    api('/api/deliveries/' + n).then(function (result) {
      if (result.status !== 200) { say(result.body.error.message); return; }
      var record = result.body;
      byId('detail-empty').hidden = true;
      byId('detail').hidden = false;
      byId('detail-heading').textContent = '#' + record.n + ' ' + (record.event ? record.event.type + ' ' + record.event.id : '(no envelope)');
      byId('verdict').textContent = record.verdict.lines.join('\\n');
      var a = record.answer;
      byId('answer').textContent = (a.status !== undefined ? a.status : a.failure) + ' in ' + a.latencyMs + ' ms' +
        (a.outcome ? '\\noutcome: ' + a.outcome.outcome + (a.outcome.handlerMs !== undefined ? ', handler ' + a.outcome.handlerMs + ' ms' : '') + (a.outcome.keyId !== undefined ? ', key ' + a.outcome.keyId : '') + (a.outcome.tenant !== undefined ? ', tenant ' + a.outcome.tenant : '') : '') +
        (a.body ? '\\n\\n' + a.body + (a.truncated ? '\\n… (cut at 64 KiB)' : '') : '');
      byId('headers').textContent = Object.keys(record.request.headers).map(function (name) { return name + ': ' + shortened(name, record.request.headers[name]); }).join('\\n');
      showBody(record.n, record.request.bodyBase64);
    });
  }

  byId('deliveries').addEventListener('click', function (event) {
    var row = event.target.closest('tr');
    if (row) select(Number(row.dataset.n));
  });
  byId('deliveries').addEventListener('keydown', function (event) {
    var row = event.target.closest('tr');
    if (!row) return;
    if (event.key === 'Enter' || event.key === ' ') { event.preventDefault(); select(Number(row.dataset.n)); }
    if (event.key === 'ArrowDown' && row.nextElementSibling) { event.preventDefault(); row.nextElementSibling.focus(); }
    if (event.key === 'ArrowUp' && row.previousElementSibling) { event.preventDefault(); row.previousElementSibling.focus(); }
  });
  document.querySelectorAll('[data-mode]').forEach(function (button) {
    button.addEventListener('click', function () {
      var mode = button.dataset.mode;
      say('Replaying #' + selected + ' (' + mode + ')…');
      api('/api/deliveries/' + selected + '/replay', { mode: mode }).then(function (result) {
        if (result.status !== 201) { say(result.body.error.message); return; }
        var d = result.body;
        say('Replayed #' + selected + ' (' + mode + ') as #' + d.n + ': ' + receiverText(d.answer) + (d.answer.outcome ? ' ' + d.answer.outcome.outcome : ''));
      });
    });
  });
  byId('send-form').addEventListener('submit', function (event) {
    event.preventDefault();
    var text = byId('send-data').value.trim();
    var request = { type: byId('send-type').value.trim() };
    if (text !== '') {
      try { request.data = JSON.parse(text); } catch (e) { say('data is not JSON: ' + e.message); return; }
    }
    api('/api/send', request).then(function (result) {
      if (result.status !== 201) { say(result.body.error.message); return; }
      say('Sent ' + request.type + ' as #' + result.body.n + ': ' + receiverText(result.body.answer));
    });
  });

  function showDropped(dropped) {
    byId('dropped').hidden = dropped === 0;
    byId('dropped').textContent = dropped + ' older deliveries dropped: the relay keeps the last 500, or 50 MiB.';
  }
  function loadList() {
    api('/api/deliveries').then(function (result) {
      if (result.status !== 200) { say(result.body.error.message); return; }
      deliveries = result.body.deliveries.concat(deliveries.filter(function (d) { return !result.body.deliveries.some(function (one) { return one.n === d.n; }); }));
      deliveries.sort(function (a, b) { return b.n - a.n; });
      showDropped(result.body.dropped);
      renderList();
    });
  }
  var events = new EventSource('/api/events?token=' + encodeURIComponent(token));
  // On each connection, the first included: the relay ends a stream that falls behind, and the browser opens it again.
  events.addEventListener('open', loadList);
  events.addEventListener('delivery', function (message) {
    var data = JSON.parse(message.data);
    if (!deliveries.some(function (d) { return d.n === data.delivery.n; })) deliveries.unshift(data.delivery);
    if (deliveries.length > 500) deliveries.length = 500;
    showDropped(data.dropped);
    renderList();
  });
})();
`;

/** The source a policy names an inline element's text by. */
const hashOf = (text: string): string => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

/** Its own script and style alone, and connections to the relay: no 'unsafe-inline'. */
const POLICY = `default-src 'none'; script-src ${hashOf(SCRIPT)}; style-src ${hashOf(STYLE)}; connect-src 'self'`;

/** The page, its policy in its head. */
export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="${POLICY}">
<title>svc-webhooks dev</title>
<style>${STYLE}</style>
</head>
<body>
<header>
  <h1>svc-webhooks dev</h1>
  <div>Deliveries go to <code id="webhook-url"></code>; each is verified here, forwarded to your receiver and listed below as it arrives.</div>
</header>
<main>
  <section aria-labelledby="list-title">
    <h2 id="list-title">Deliveries</h2>
    <p id="dropped" class="note" hidden></p>
    <div class="scroll"><table>
      <caption class="note">Newest first. Arrow keys move, Enter opens.</caption>
      <thead><tr><th scope="col">#</th><th scope="col">Time</th><th scope="col">Type</th><th scope="col">Id</th><th scope="col">Tenant</th><th scope="col">Relay</th><th scope="col">Receiver</th><th scope="col">Outcome</th><th scope="col">ms</th></tr></thead>
      <tbody id="deliveries"></tbody>
    </table></div>
    <p id="empty" class="note">Nothing yet: send a delivery to the address above, or use Send.</p>
  </section>
  <div>
    <section aria-labelledby="detail-title" id="detail-section">
      <h2 id="detail-title">Delivery</h2>
      <p id="detail-empty" class="note">Pick a delivery in the list.</p>
      <div id="detail" hidden>
        <h3 id="detail-heading"></h3>
        <div role="group" aria-label="Replay this delivery">
          <button type="button" data-mode="exact">Replay exact bytes</button>
          <button type="button" data-mode="resign">Replay re-signed</button>
          <button type="button" data-mode="new-id">Replay with a new id</button>
        </div>
        <p class="note">Exact bytes are refused as too old once 5 minutes have passed since the delivery was signed, by design. Re-signed keeps the id: a receiver that deduplicates answers it as a duplicate. A new id runs the handler again.</p>
        <h4>Relay verdict</h4><pre id="verdict"></pre>
        <h4>Receiver answer</h4><pre id="answer"></pre>
        <h4>Headers</h4><pre id="headers"></pre>
        <h4>Body</h4><pre id="body"></pre>
        <p id="body-note" class="note" hidden></p>
      </div>
    </section>
    <section aria-labelledby="send-title" class="below">
      <h2 id="send-title">Send</h2>
      <form id="send-form">
        <label for="send-type">Event type</label>
        <input id="send-type" list="send-types" value="webhook.test" required>
        <datalist id="send-types"><option value="call.missed"><option value="message.received"><option value="webhook.test"><option value="transcript.ready"><option value="ai_summary.ready"></datalist>
        <label for="send-data">data (JSON object, merged into the event's data; empty for the default)</label>
        <textarea id="send-data" spellcheck="false"></textarea>
        <button type="submit">Send signed</button>
      </form>
    </section>
    <p id="status" role="status" aria-live="polite" class="note"></p>
  </div>
</main>
<script>${SCRIPT}</script>
</body>
</html>
`;
