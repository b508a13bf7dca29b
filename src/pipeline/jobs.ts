/** Reading and writing job rows: the only SQL on `jobs` outside the ledger. */
import type { InferSelectModel } from 'drizzle-orm';
import type { jobs } from '../db/schema.js';

export type JobRow = InferSelectModel<typeof jobs>;
