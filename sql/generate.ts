/** Writes sql/svc-webhooks-postgres.sql from the schema in src/. Run: npm run sql:postgres */
import { writeFileSync } from 'node:fs';
import { renderSchemaFile, SCHEMA_FILE } from './schema-file.js';

writeFileSync(SCHEMA_FILE, renderSchemaFile());
