/** A response's status and, for a refusal, its `error.code`, as one comparable value. */
export async function refusalOf(response: Response): Promise<{ status: number; code: string }> {
  const { error } = (await response.json()) as { error: { code: string } };
  return { status: response.status, code: error.code };
}
