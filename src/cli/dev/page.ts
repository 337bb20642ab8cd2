/**
 * The page of `svc-webhooks dev`: one static document, shipped in the
 * package, with no build step and nothing fetched from elsewhere. It reads
 * the run's token from its own address and talks to the relay's /api: the
 * list as deliveries arrive (Server-Sent Events), filtered and cleared; a
 * delivery's detail, its body formatted and as received, and as a curl
 * command; replays and sends, each opening the delivery it made. What it
 * shows of a delivery is set as text, never as markup; and its policy lets
 * only its own script and style run, named by their hashes, so that markup
 * let in by mistake would run nothing.
 */
import { createHash } from 'node:crypto';
import { KNOWN_EVENT_TYPES } from '../../core/event.js';

const STYLE = `
  body { font: 14px/1.4 system-ui, sans-serif; margin: 0; color: #1d1d1f; background: #fafafa; }
  header { padding: 12px 20px; background: #1d2a3a; color: #fff; }
  header h1 { font-size: 16px; margin: 0 0 4px; }
  header code { color: #cde; }
  main { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 16px; padding: 16px 20px; align-items: start; }
  @media (max-width: 1100px) { main { grid-template-columns: minmax(0, 1fr); padding: 12px; } }
  .scroll { overflow-x: auto; }
  section { background: #fff; border: 1px solid #ddd; border-radius: 6px; padding: 12px; min-width: 0; }
  h2 { font-size: 15px; margin: 0 0 8px; }
  .bar { display: flex; flex-wrap: wrap; align-items: center; gap: 6px 12px; margin-bottom: 8px; }
  .bar h2 { margin: 0; flex: 1 0 auto; }
  .bar label { display: inline; margin: 0; font-weight: 400; }
  .bar select, .bar input { font: inherit; max-width: 12em; }
  table { width: 100%; border-collapse: collapse; font-size: 13px; }
  th, td { text-align: left; padding: 4px; border-bottom: 1px solid #eee; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; max-width: 13em; }
  td.id { max-width: none; font-family: ui-monospace, monospace; font-size: 12px; }
  table:not(.with-tenants) .tenant { display: none; }
  tbody tr { cursor: pointer; }
  tbody tr:hover, tbody tr:focus { background: #eef4ff; outline: 2px solid #4a7bd0; outline-offset: -2px; }
  tbody tr[aria-selected="true"] { background: #dde8ff; }
  .bad { color: #b00020; font-weight: 600; }
  .good { color: #1b7f3b; font-weight: 600; }
  pre { background: #f4f4f6; padding: 8px; overflow: auto; max-height: 320px; margin: 4px 0 10px; white-space: pre-wrap; overflow-wrap: anywhere; }
  .bodies { display: grid; grid-template-columns: repeat(auto-fit, minmax(14em, 1fr)); gap: 0 8px; }
  .bodies h5 { margin: 0; font-size: 13px; }
  .bodies pre { font-size: 12px; }
  button { font: inherit; padding: 4px 10px; margin: 2px 4px 2px 0; }
  label { display: block; margin: 6px 0 2px; font-weight: 600; }
  textarea { width: 100%; box-sizing: border-box; font-family: ui-monospace, monospace; min-height: 90px; }
  .note { color: #555; font-size: 13px; }
  #status:empty { display: none; }
  #status { background: #fff8dc; padding: 4px 8px; border-radius: 4px; }
  .below { margin-top: 16px; }
`;

// Written as it runs: String.raw keeps its escapes for the browser to read.
const SCRIPT = String.raw`
(function () {
  var token = new URLSearchParams(location.search).get('token') || '';
  var deliveries = [];
  var selected = null;
  var samples = {};
  var filledSample = '';
  var byId = function (id) { return document.getElementById(id); };
  byId('webhook-url').textContent = location.origin + '/webhooks';

  function api(path, body, method) {
    var init = { method: method || (body === undefined ? 'GET' : 'POST'), headers: { authorization: 'Bearer ' + token } };
    if (body !== undefined) { init.headers['content-type'] = 'application/json'; init.body = JSON.stringify(body); }
    return fetch(path, init).then(function (response) {
      if (response.status === 204) return { status: 204, body: null };
      return response.json().then(function (json) { return { status: response.status, body: json }; });
    });
  }
  function say(text) { byId('status').textContent = text; }
  function receiverText(d) { return d.status !== undefined ? String(d.status) : (d.failure || ''); }
  function outcomeText(d) { return d.outcome ? d.outcome.outcome : (d.status !== undefined ? '(answered)' : 'no answer'); }
  function cell(row, text, title, className) {
    var td = document.createElement('td');
    td.textContent = text;
    td.title = title;
    if (className) td.className = className;
    row.appendChild(td);
    return td;
  }
  // An id's start says its kind and when it was made, alike for ids made together: the list shows its end.
  function shortId(id) {
    if (id.length <= 18) return id;
    var kind = id.indexOf('_');
    return (kind > 0 && kind < 8 ? id.slice(0, kind + 1) : id.slice(0, 4)) + '…' + id.slice(-10);
  }
  function ago(iso) {
    var seconds = Math.floor((Date.now() - Date.parse(iso)) / 1000);
    if (!(seconds >= 5)) return 'just now';
    if (seconds < 60) return seconds + ' s ago';
    if (seconds < 3600) return Math.floor(seconds / 60) + ' min ago';
    if (seconds < 86400) return Math.floor(seconds / 3600) + ' h ago';
    return Math.floor(seconds / 86400) + ' d ago';
  }

  function distinct(values) {
    return Array.from(new Set(values.filter(function (value) { return value !== null; }))).sort();
  }
  // Rebuilt as deliveries come, keeping the choice: a choice no delivery has any more stays, matching none.
  function fillSelect(select, values) {
    var chosen = select.value;
    while (select.options.length > 1) select.remove(1);
    if (chosen !== '' && values.indexOf(chosen) < 0) values.push(chosen);
    values.forEach(function (value) { select.add(new Option(value, value)); });
    select.value = chosen;
  }
  function matches(d) {
    var type = byId('filter-type').value;
    var outcome = byId('filter-outcome').value;
    var id = byId('filter-id').value.trim().toLowerCase();
    return (type === '' || (d.event !== undefined && d.event.type === type)) &&
      (outcome === '' || outcomeText(d) === outcome) &&
      (id === '' || (d.event !== undefined && d.event.id.toLowerCase().indexOf(id) >= 0));
  }

  function renderList() {
    fillSelect(byId('filter-type'), distinct(deliveries.map(function (d) { return d.event ? d.event.type : null; })));
    fillSelect(byId('filter-outcome'), distinct(deliveries.map(outcomeText)));
    var focused = document.activeElement && document.activeElement.parentNode === byId('deliveries') ? document.activeElement.dataset.n : null;
    var body = byId('deliveries');
    body.textContent = '';
    var shown = deliveries.filter(matches);
    shown.forEach(function (d) {
      var row = document.createElement('tr');
      row.tabIndex = 0;
      row.dataset.n = String(d.n);
      row.setAttribute('aria-selected', String(d.n === selected));
      var number = String(d.n) + (d.replayOf ? ' ↻' + d.replayOf : d.source === 'send' ? ' sent' : '');
      cell(row, number, d.replayOf ? 'replay of ' + d.replayOf + ' (' + d.mode + ')' : number);
      cell(row, ago(d.receivedAt), new Date(d.receivedAt).toLocaleString()).dataset.time = d.receivedAt;
      cell(row, d.event ? d.event.type : '', d.event ? d.event.type : '');
      cell(row, d.event ? shortId(d.event.id) : '', d.event ? d.event.id : '', 'id');
      var tenant = d.outcome && d.outcome.tenant ? d.outcome.tenant : '';
      cell(row, tenant, tenant, 'tenant');
      var relay = d.valid ? 'valid' : (d.code || 'invalid');
      cell(row, relay, relay, d.valid ? 'good' : 'bad');
      cell(row, receiverText(d), receiverText(d), d.status !== undefined && d.status < 300 ? 'good' : 'bad');
      cell(row, outcomeText(d), d.outcome || d.status === undefined ? outcomeText(d) : 'your code answered, without an outcome header (outcomeHeader: \'on\' adds it)');
      cell(row, String(d.latencyMs), String(d.latencyMs));
      body.appendChild(row);
      if (String(d.n) === focused) row.focus();
    });
    byId('list').classList.toggle('with-tenants', deliveries.some(function (d) { return d.outcome && d.outcome.tenant; }));
    byId('empty').hidden = deliveries.length > 0;
    byId('no-match').hidden = deliveries.length === 0 || shown.length > 0;
  }
  setInterval(function () {
    document.querySelectorAll('#deliveries [data-time]').forEach(function (td) { td.textContent = ago(td.dataset.time); });
  }, 5000);

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
      if (inString) { if (c === '\\') i++; else if (c === '"') inString = false; }
      else if (c === '"') inString = true;
      else if (c === '{' || c === '[') { if (++depth > limit) return true; }
      else if (c === '}' || c === ']') depth--;
    }
    return false;
  }
  function isUtf8(bytes) {
    try { new TextDecoder('utf-8', { fatal: true }).decode(bytes); return true; } catch (e) { return false; }
  }
  // The bytes as received, beside the body formatted when it is JSON and formatting changes it: a body
  // diagnosed as re-serialized shows what came in.
  function showBody(n, base64) {
    var bytes = Uint8Array.from(atob(base64), function (c) { return c.charCodeAt(0); });
    var raw = new TextDecoder('utf-8', { ignoreBOM: true }).decode(bytes);
    var formatted = null;
    var notes = [];
    if (bytes.length <= FORMATTED_BYTES && !deeperThan(raw, FORMATTED_DEPTH)) {
      try { formatted = JSON.stringify(JSON.parse(raw), null, 2); } catch (e) { /* not JSON: shown as it came */ }
    } else notes.push('Shown as received: a body is formatted only up to 64 KiB and 64 levels deep.');
    if (formatted === raw) formatted = null;
    if (!isUtf8(bytes)) notes.push('Not UTF-8: what is no UTF-8 is shown as �.');
    var longest = Math.max(raw.length, formatted === null ? 0 : formatted.length);
    if (longest > SHOWN_CHARACTERS) notes.push('Cut at 65,536 characters of ' + longest + ': GET /api/deliveries/' + n + ' gives it whole.');
    byId('body-formatted').hidden = formatted === null;
    byId('body').textContent = formatted === null ? '' : formatted.slice(0, SHOWN_CHARACTERS);
    byId('body-raw').textContent = raw.slice(0, SHOWN_CHARACTERS);
    byId('body-size').textContent = 'As received: ' + bytes.length + ' bytes' + (bytes.length > 0 && bytes[bytes.length - 1] === 10 ? ', the last a newline' : '');
    byId('body-note').textContent = notes.join(' ');
    byId('body-note').hidden = notes.length === 0;
  }
  function showAnswer(a) {
    byId('answer').textContent = (a.status !== undefined ? a.status : a.failure) + ' in ' + a.latencyMs + ' ms' +
      (a.outcome ? '\noutcome: ' + a.outcome.outcome + (a.outcome.handlerMs !== undefined ? ', handler ' + a.outcome.handlerMs + ' ms' : '') + (a.outcome.keyId !== undefined ? ', key ' + a.outcome.keyId : '') + (a.outcome.tenant !== undefined ? ', tenant ' + a.outcome.tenant : '') : '') +
      (a.body ? '\n\n' + a.body + (a.truncated ? '\n… (cut at 64 KiB)' : '') : '');
    byId('answer-headers-block').hidden = a.headers === undefined;
    byId('answer-headers').textContent = (a.headers || []).map(function (header) { return header[0] + ': ' + header[1]; }).join('\n');
    byId('answer-headers-note').hidden = !a.headersLeftOut;
    byId('answer-headers-note').textContent = a.headersLeftOut + ' more left out: the relay keeps 64 headers of an answer, of 8 KiB in all.';
  }

  // Opens delivery n; brought into sight when it is one the page just made, whose status follows.
  function select(n, bringIntoSight) {
    selected = n;
    if (!bringIntoSight) say('');
    renderList();
    return api('/api/deliveries/' + n).then(function (result) {
      if (result.status !== 200) { say(result.body.error.message); return; }
      if (selected !== n) return;
      var record = result.body;
      byId('detail-empty').hidden = true;
      byId('detail').hidden = false;
      byId('curl-block').hidden = true;
      byId('detail-heading').textContent = '#' + record.n + ' ' + (record.event ? record.event.type + ' ' + record.event.id : '(no envelope)');
      byId('verdict').textContent = record.verdict.lines.join('\n');
      showAnswer(record.answer);
      byId('headers').textContent = Object.keys(record.request.headers).map(function (name) { return name + ': ' + shortened(name, record.request.headers[name]); }).join('\n');
      showBody(record.n, record.request.bodyBase64);
      if (bringIntoSight) byId('detail-top').scrollIntoView({ block: 'nearest' });
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
  ['filter-type', 'filter-outcome', 'filter-id'].forEach(function (id) { byId(id).addEventListener('input', renderList); });
  document.querySelectorAll('[data-mode]').forEach(function (button) {
    button.addEventListener('click', function () {
      var mode = button.dataset.mode;
      var of = selected;
      say('Replaying #' + of + ' (' + mode + ')…');
      api('/api/deliveries/' + of + '/replay', { mode: mode }).then(function (result) {
        if (result.status !== 201) { say(result.body.error.message); return; }
        var d = result.body;
        select(d.n, true);
        say('Replayed #' + of + ' (' + mode + ') as #' + d.n + ': ' + receiverText(d.answer) + (d.answer.outcome ? ' ' + d.answer.outcome.outcome : ''));
      });
    });
  });
  byId('copy-curl').addEventListener('click', function () {
    var n = selected;
    api('/api/deliveries/' + n + '/curl').then(function (result) {
      if (result.status !== 200) { say(result.body.error.message); return; }
      byId('curl').textContent = result.body.command;
      byId('curl-block').hidden = false;
      navigator.clipboard.writeText(result.body.command).then(
        function () { say('Copied #' + n + ' as curl: it sends the request to this relay again.'); },
        function () { say('The browser did not let the page copy: the command is shown below the buttons.'); });
    });
  });

  // The type's sample fills the data while it is empty or holds the last sample: what was typed stays.
  function fillSample() {
    var type = byId('send-type').value.trim();
    var data = byId('send-data');
    if (data.value !== '' && data.value !== filledSample) return;
    filledSample = Object.prototype.hasOwnProperty.call(samples, type) ? JSON.stringify(samples[type], null, 2) : '';
    data.value = filledSample;
  }
  byId('send-type').addEventListener('input', fillSample);
  api('/api/samples').then(function (result) {
    if (result.status !== 200) return;
    samples = result.body.samples;
    fillSample();
  });
  byId('send-form').addEventListener('submit', function (event) {
    event.preventDefault();
    var text = byId('send-data').value.trim();
    var request = { type: byId('send-type').value.trim() };
    byId('send-status').textContent = '';
    if (text !== '') {
      try { request.data = JSON.parse(text); } catch (e) { byId('send-status').textContent = 'data is not JSON: ' + e.message; return; }
    }
    api('/api/send', request).then(function (result) {
      if (result.status !== 201) { byId('send-status').textContent = result.body.error.message; return; }
      select(result.body.n, true);
      say('Sent ' + request.type + ' as #' + result.body.n + ': ' + receiverText(result.body.answer));
    });
  });

  function showDropped(dropped) {
    byId('dropped').hidden = dropped === 0;
    byId('dropped').textContent = dropped + ' older deliveries dropped: the relay keeps the last 500, or 50 MiB.';
  }
  function cleared() {
    deliveries = [];
    selected = null;
    byId('detail').hidden = true;
    byId('detail-empty').hidden = false;
    showDropped(0);
    renderList();
  }
  byId('clear').addEventListener('click', function () {
    api('/api/deliveries', undefined, 'DELETE').then(function (result) {
      if (result.status !== 204) { say(result.body.error.message); return; }
      cleared();
      say('Cleared: the relay keeps none of the deliveries listed before.');
    });
  });
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
  events.addEventListener('cleared', cleared);
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
  <section aria-labelledby="list-title" id="list-section">
    <div class="bar">
      <h2 id="list-title">Deliveries</h2>
      <label>Type <select id="filter-type"><option value="">all</option></select></label>
      <label>Outcome <select id="filter-outcome"><option value="">all</option></select></label>
      <label>Id <input id="filter-id" type="search" size="12" placeholder="part of an id"></label>
      <button type="button" id="clear">Clear</button>
    </div>
    <p id="dropped" class="note" hidden></p>
    <div class="scroll"><table id="list">
      <caption class="note">Newest first. Arrow keys move, Enter opens.</caption>
      <thead><tr><th scope="col">#</th><th scope="col">Time</th><th scope="col">Type</th><th scope="col">Id</th><th scope="col" class="tenant">Tenant</th><th scope="col">Relay</th><th scope="col">Receiver</th><th scope="col">Outcome</th><th scope="col">ms</th></tr></thead>
      <tbody id="deliveries"></tbody>
    </table></div>
    <p id="empty" class="note">Nothing yet: send a delivery to the address above, or use Send.</p>
    <p id="no-match" class="note" hidden>No delivery matches the filter.</p>
  </section>
  <div>
    <section aria-labelledby="detail-title" id="detail-section">
      <div id="detail-top">
        <h2 id="detail-title">Delivery</h2>
        <p id="status" role="status" aria-live="polite" class="note"></p>
      </div>
      <p id="detail-empty" class="note">Pick a delivery in the list.</p>
      <div id="detail" hidden>
        <h3 id="detail-heading"></h3>
        <div role="group" aria-label="Replay this delivery">
          <button type="button" data-mode="exact">Replay exact bytes</button>
          <button type="button" data-mode="resign">Replay re-signed</button>
          <button type="button" data-mode="new-id">Replay with a new id</button>
          <button type="button" id="copy-curl">Copy as curl</button>
        </div>
        <p class="note">Exact bytes are refused as too old once 5 minutes have passed since the delivery was signed, by design. Re-signed keeps the id: a receiver that deduplicates answers it as a duplicate. A new id runs the handler again. Copy as curl gives a shell command that sends the request, exact bytes, to this relay again.</p>
        <div id="curl-block" hidden><h4>As curl</h4><pre id="curl"></pre></div>
        <h4>Relay verdict</h4><pre id="verdict"></pre>
        <h4>Receiver answer</h4><pre id="answer"></pre>
        <div id="answer-headers-block"><h4>Receiver headers</h4><pre id="answer-headers"></pre><p id="answer-headers-note" class="note" hidden></p></div>
        <h4>Request headers</h4><pre id="headers"></pre>
        <h4>Body</h4>
        <div class="bodies">
          <div id="body-formatted"><h5>Formatted</h5><pre id="body"></pre></div>
          <div id="body-received"><h5 id="body-size"></h5><pre id="body-raw"></pre></div>
        </div>
        <p id="body-note" class="note" hidden></p>
      </div>
    </section>
    <section aria-labelledby="send-title" class="below">
      <h2 id="send-title">Send</h2>
      <form id="send-form">
        <label for="send-type">Event type</label>
        <input id="send-type" list="send-types" value="webhook.test" required>
        <datalist id="send-types">${KNOWN_EVENT_TYPES.map((type) => `<option value="${type}">`).join('')}</datalist>
        <label for="send-data">data (JSON object, merged into the event's data; a known type fills in a sample)</label>
        <textarea id="send-data" spellcheck="false"></textarea>
        <button type="submit">Send signed</button>
        <p id="send-status" class="note" role="status"></p>
      </form>
    </section>
  </div>
</main>
<script>${SCRIPT}</script>
</body>
</html>
`;
