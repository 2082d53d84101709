import type pg from "pg";

/**
 * Runs `work` in one transaction on a client of `pool`: BEGIN, then COMMIT when `work`
 * resolves, ROLLBACK when it throws (the work's error is what the caller sees, not a
 * failed ROLLBACK's), and the client back to the pool either way. Every multi-statement
 * write of Callboard's state over Postgres goes through it (the webhook inbox, the
 * forwarder's claim, the copy's batches), so none can leave a client mid-transaction.
 */
export async function inPgTransaction<T>(pool: pg.Pool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    await client.query("BEGIN");
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  } finally {
    client.release();
  }
}
