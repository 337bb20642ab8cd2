/** Writes sql/svc-webhooks-d1.sql from the schema in src/. Run: npm run sql:d1 */
import { writeFileSync } from 'node:fs';
import { D1_SCHEMA_FILE, renderD1SchemaFile } from './d1-schema-file.js';

writeFileSync(D1_SCHEMA_FILE, renderD1SchemaFile());
