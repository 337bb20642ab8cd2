/** A correctly signed delivery, to drive a receiver over a dedup store. */
import { sign } from '../../src/sign.js';

export const SECRET = `whsec_${Buffer.from('dedup-test-secret-0123456789').toString('base64')}`;

export function signedDelivery(id: string): { payload: string; headers: Record<string, string> } {
  const payload = JSON.stringify({ id, type: 'message.received', data: { object: { id: 'msg_1' } } });
  return { payload, headers: { ...sign(payload, { id, timestamp: Math.floor(Date.now() / 1000), secret: SECRET }) } };
}
