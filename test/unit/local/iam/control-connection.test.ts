// The IAM check's control endpoint (register a stack, authorize a service's call, read denials) answers each
// request on a connection it then closes. Kept alive, a client could send its next request on a socket the
// proxy's keep-alive timer is closing at that moment: under load the client's idle timer, shorter than the
// proxy's by a second, fires late, and the request fails with `fetch failed` (undici: "other side closed")
// though the proxy never saw it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONTROL_PREFIX, type IamProxy, startIamProxy } from '../../../../local/iam/proxy.ts';

let proxy: IamProxy;
beforeAll(async () => {
  proxy = await startIamProxy({ upstream: 'http://127.0.0.1:9' });
});
afterAll(() => proxy.stop());

describe('the IAM check control endpoint', () => {
  it('closes the connection after each answer, so no client reuses a socket the proxy may be closing', async () => {
    const response = await fetch(`${proxy.endpoint}${CONTROL_PREFIX}denials?after=0`);
    expect(response.status).toBe(200);
    expect(response.headers.get('connection')).toBe('close');
    expect(await response.json()).toMatchObject({ denials: [] });
  });
});
