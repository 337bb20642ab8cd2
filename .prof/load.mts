import autocannon from 'autocannon';
import { sign } from '/work/main/src/index.ts';
const secret = `whsec_${Buffer.from('bench-secret-bench-secret-bench!').toString('base64')}`;
const body = JSON.stringify({ id: 'evt_1', type: 'message.received', data: { object: { id: 'm', text: 'x'.repeat(900) } } });
const headers = { 'content-type': 'application/json', ...sign(body, { id: 'evt_1', timestamp: 1_700_000_000, secret }) };
const r = await autocannon({ url: `http://127.0.0.1:${process.argv[2]}/webhooks`, method: 'POST', body, headers, connections: 10, duration: 5 });
console.log(process.argv[2], r.requests.average, r.non2xx);
