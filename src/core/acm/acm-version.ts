// The ACM version ACIA's artifacts, ledger and bundles conform to (see docs/acm-conformance.md).
export const ACM_VERSION = 'v0.5';
