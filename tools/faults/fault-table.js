"use strict";
var __importDefault = (this && this.__importDefault) || function (mod) {
    return (mod && mod.__esModule) ? mod : { "default": mod };
};
Object.defineProperty(exports, "__esModule", { value: true });
exports.writeFaultRows = writeFaultRows;
const node_fs_1 = __importDefault(require("node:fs"));
const node_path_1 = __importDefault(require("node:path"));
const testing_1 = require("@apphost/testing");
const DIR = node_path_1.default.join(testing_1.REPO_ROOT, 'tmp', 'faults-table');
const TABLE = node_path_1.default.join(testing_1.REPO_ROOT, 'tmp', 'faults-table.md');
/**
 * Each suite writes its rows to tmp/faults-table/<suite>.json; the table (tmp/faults-table.md) is rebuilt from all of
 * them, so suites running in parallel workers never write the same file.
 */
function writeFaultRows(suite, rows) {
    node_fs_1.default.mkdirSync(DIR, { recursive: true });
    node_fs_1.default.writeFileSync(node_path_1.default.join(DIR, `${suite}.json`), JSON.stringify(rows, null, 2));
    const all = node_fs_1.default
        .readdirSync(DIR)
        .filter((f) => f.endsWith('.json'))
        .sort()
        .flatMap((f) => JSON.parse(node_fs_1.default.readFileSync(node_path_1.default.join(DIR, f), 'utf8')));
    const lines = [
        '| fault | code seen | recovered | lost |',
        '| --- | --- | --- | --- |',
        ...all.map((r) => `| ${r.fault} | ${r.codes.join(', ') || '-'} | ${r.recoveredMs === null ? 'no' : `yes (${(r.recoveredMs / 1000).toFixed(1)} s)`} | ${r.lost.length ? r.lost.join('; ').replace(/\|/g, '/') : 'nothing'} |`),
    ];
    node_fs_1.default.writeFileSync(TABLE, `${lines.join('\n')}\n`);
}
//# sourceMappingURL=fault-table.js.map