// The allow-list the egress proxy applies: hosts, ports, wildcards, and entries it refuses.
import { describe, expect, it } from 'vitest';
import { hostAllowed, isInternal, parseHostRule } from '../../../src/core/sandbox/egress-proxy.js';

describe('allowedHosts rules', () => {
  const rules = ['registry.npmjs.org', '*.pypi.org', 'api.example.com:8443', '10.0.0.5:5432'].map(parseHostRule);

  it('a bare host allows ports 80 and 443 only', () => {
    expect(hostAllowed(rules, 'registry.npmjs.org', 443)).toBe(true);
    expect(hostAllowed(rules, 'registry.npmjs.org', 80)).toBe(true);
    expect(hostAllowed(rules, 'registry.npmjs.org', 22)).toBe(false);
  });

  it('compares case-insensitively and ignores a trailing dot, but never matches a longer or shorter name', () => {
    expect(hostAllowed(rules, 'REGISTRY.npmjs.org.', 443)).toBe(true);
    expect(hostAllowed(rules, 'evil-registry.npmjs.org', 443)).toBe(false);
    expect(hostAllowed(rules, 'registry.npmjs.org.evil.com', 443)).toBe(false);
    expect(hostAllowed(rules, 'npmjs.org', 443)).toBe(false);
  });

  it('*.domain allows subdomains, not the domain itself or look-alikes', () => {
    expect(hostAllowed(rules, 'files.pypi.org', 443)).toBe(true);
    expect(hostAllowed(rules, 'a.b.pypi.org', 443)).toBe(true);
    expect(hostAllowed(rules, 'pypi.org', 443)).toBe(false);
    expect(hostAllowed(rules, 'notpypi.org', 443)).toBe(false);
  });

  it('host:port allows that port only; IPv4 addresses work the same way', () => {
    expect(hostAllowed(rules, 'api.example.com', 8443)).toBe(true);
    expect(hostAllowed(rules, 'api.example.com', 443)).toBe(false);
    expect(hostAllowed(rules, '10.0.0.5', 5432)).toBe(true);
    expect(hostAllowed(rules, '10.0.0.6', 5432)).toBe(false);
  });

  it('accepts single-label names and plain IPv4 (an internal address is still refused when a name resolves to it)', () => {
    expect(parseHostRule('localhost:8080')).toEqual({ host: 'localhost', wildcard: false, port: 8080 });
    expect(parseHostRule('10.0.0.5')).toEqual({ host: '10.0.0.5', wildcard: false, port: null });
  });

  it('refuses entries that are not a host, host:port or *.domain, with the entry in the message', () => {
    for (const bad of ['', '*', 'http://x.com', 'x.com/path', 'a b', 'x.com:0', 'x.com:70000', '*.*.com', 'user@x.com', '*.com', '*.1', '*.10.0.0.1', '010.0.0.1', '256.1.1.1', '1.2.3']) {
      expect(() => parseHostRule(bad), bad).toThrow(/allowedHosts/);
    }
  });
});

describe('addresses a name may not resolve to', () => {
  it('refuses loopback, private, link-local and their IPv4-mapped forms, and lets public IPv4 and IPv6 through', () => {
    for (const a of ['127.0.0.1', '10.1.2.3', '172.16.0.9', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::ffff:10.0.0.1']) {
      expect(isInternal(a), a).toBe(true);
    }
    // An IPv4-mapped rule once matched every IPv4 address, so no allowed host could ever be reached.
    for (const a of ['203.0.113.80', '104.16.0.35', '8.8.8.8', '2606:4700::6810:1', '::ffff:104.16.0.35']) expect(isInternal(a), a).toBe(false);
  });
});
