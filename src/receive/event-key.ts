/**
 * The key an event is deduplicated under. One endpoint: the `webhook-id`
 * alone. Many tenants behind one receiver: the id scoped by the tenant, so
 * the same id delivered to two tenants' endpoints is processed once for each.
 */

/**
 * `id` alone without a tenant, else `<tenant>:<id>` with the tenant
 * percent-encoded: an encoded tenant holds no `:`, so the first `:` splits
 * the two and no two pairs share a key.
 */
export function eventKey(id: string, tenant?: string): string {
  return tenant === undefined ? id : `${encodeURIComponent(tenant)}:${id}`;
}
