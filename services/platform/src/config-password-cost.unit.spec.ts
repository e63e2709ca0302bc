import { describe, expect, it } from 'vitest';
import { DEFAULT_ARGON2ID_COST } from './crypto/password.ts';
import { loadConfig } from './config/index.ts';
import { configProblems, minimalEnv } from './config.test-support.ts';

describe('AUTH_PASSWORD_ARGON2_*: the argon2id cost of new hashes', () => {
  it("is today's cost unless set, and what is set otherwise", () => {
    expect(loadConfig(minimalEnv).password.argon2).toEqual(DEFAULT_ARGON2ID_COST);
    expect(DEFAULT_ARGON2ID_COST).toEqual({ memoryKiB: 19_456, iterations: 2, parallelism: 1 });
    const set = { AUTH_PASSWORD_ARGON2_MEMORY_KIB: '65536', AUTH_PASSWORD_ARGON2_ITERATIONS: '3', AUTH_PASSWORD_ARGON2_PARALLELISM: '2' };
    expect(loadConfig({ ...minimalEnv, ...set }).password.argon2).toEqual({ memoryKiB: 65_536, iterations: 3, parallelism: 2 });
  });

  it('refuses a cost outside its bounds, naming the variable and its bounds', () => {
    // Too little memory or too few passes also fall below the floor, which says so as well.
    expect(configProblems({ AUTH_PASSWORD_ARGON2_MEMORY_KIB: '4096' })).toContain('AUTH_PASSWORD_ARGON2_MEMORY_KIB: Too small: expected number to be >=7168');
    expect(configProblems({ AUTH_PASSWORD_ARGON2_MEMORY_KIB: '2097152' })).toEqual(['AUTH_PASSWORD_ARGON2_MEMORY_KIB: Too big: expected number to be <=1048576']);
    expect(configProblems({ AUTH_PASSWORD_ARGON2_ITERATIONS: '0' })).toContain('AUTH_PASSWORD_ARGON2_ITERATIONS: Too small: expected number to be >=1');
    expect(configProblems({ AUTH_PASSWORD_ARGON2_ITERATIONS: '33' })).toEqual(['AUTH_PASSWORD_ARGON2_ITERATIONS: Too big: expected number to be <=32']);
    expect(configProblems({ AUTH_PASSWORD_ARGON2_PARALLELISM: '17' })).toEqual(['AUTH_PASSWORD_ARGON2_PARALLELISM: Too big: expected number to be <=16']);
    expect(configProblems({ AUTH_PASSWORD_ARGON2_PARALLELISM: '1.5' })).toEqual([expect.stringMatching(/^AUTH_PASSWORD_ARGON2_PARALLELISM: .*int/)]);
  });

  it("refuses memory and passes that together fall below OWASP's floor, and takes each of OWASP's pairs", () => {
    expect(configProblems({ AUTH_PASSWORD_ARGON2_MEMORY_KIB: '12288', AUTH_PASSWORD_ARGON2_ITERATIONS: '2' })).toEqual([
      "AUTH_PASSWORD_ARGON2_ITERATIONS: times AUTH_PASSWORD_ARGON2_MEMORY_KIB must be at least 35840, OWASP's argon2id floor (47104 × 1, 19456 × 2, 12288 × 3, 9216 × 4, 7168 × 5)",
    ]);
    for (const [m, t] of [[47_104, 1], [19_456, 2], [12_288, 3], [9_216, 4], [7_168, 5]]) {
      expect(configProblems({ AUTH_PASSWORD_ARGON2_MEMORY_KIB: String(m), AUTH_PASSWORD_ARGON2_ITERATIONS: String(t) }), `${m} × ${t}`).toEqual([]);
    }
  });
});
