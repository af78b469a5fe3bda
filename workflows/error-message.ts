/** The message of an activity's failure (its cause), or of any other error. */
export function errorMessage(error: unknown): string {
  const cause = (error as { cause?: { message?: string } }).cause;
  return cause?.message ?? (error as Error).message ?? String(error);
}
