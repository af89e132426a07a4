/**
 * Issuing X.509 certificates and CRLs for the test PKI, with @peculiar/x509 (the ASN.1 is
 * theirs) on Node's WebCrypto: EC P-256 keys, ECDSA with SHA-256. Keys are made by Node's own
 * `generateKeyPairSync` (several times faster than WebCrypto's) and written as PKCS#8 PEM.
 *
 * Each certificate carries what OpenSSL 3 (Mosquitto) and Node's tls check: basicConstraints,
 * keyUsage, extendedKeyUsage (serverAuth or clientAuth), subjectKeyIdentifier and
 * authorityKeyIdentifier, and for the broker a subjectAltName.
 */
// @peculiar/x509 resolves its parts through tsyringe, which needs the Reflect metadata API.
import 'reflect-metadata';
import { createPrivateKey, generateKeyPairSync, randomBytes, webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import * as x509 from '@peculiar/x509';
import { AsnConvert } from '@peculiar/asn1-schema';
import { CRLNumber, id_ce_cRLNumber } from '@peculiar/asn1-x509';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const SERVER_AUTH = '1.3.6.1.5.5.7.3.1';

/** What a certificate is for; it decides its extensions. */
export type CertificatePurpose = { kind: 'client' } | { kind: 'server'; hosts: readonly string[] };

/** A CA able to sign: its certificate and its private key. */
export interface SigningCa {
  certificate: x509.X509Certificate;
  privateKey: CryptoKey;
  /** The CA's subjectKeyIdentifier, hex: every certificate it issues names it as its authority. */
  keyId: string;
}

export interface IssuedPair {
  certificatePem: string;
  keyPem: string;
  serial: string;
}

/** A random positive serial of 16 bytes, hex (RFC 5280 section 4.1.2.2 allows up to 20). */
export function randomSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0]! & 0x7f) | 0x01; // positive, and no leading zero byte to strip
  return bytes.toString('hex');
}

function newKeyPair(): { spki: ArrayBuffer; keyPem: string } {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const der = publicKey.export({ type: 'spki', format: 'der' });
  const spki = der.buffer.slice(der.byteOffset, der.byteOffset + der.byteLength);
  return { spki, keyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string };
}

/** The private key of a PKCS#8 PEM, as a WebCrypto signing key. */
export async function importSigningKey(keyPem: string): Promise<CryptoKey> {
  const der = createPrivateKey(keyPem).export({ type: 'pkcs8', format: 'der' });
  return webcrypto.subtle.importKey('pkcs8', der, { name: 'ECDSA', namedCurve: 'P-256' }, false, ['sign']);
}

export async function loadSigningCa(certificatePem: string, keyPem: string): Promise<SigningCa> {
  const certificate = new x509.X509Certificate(certificatePem);
  const ski = certificate.getExtension(x509.SubjectKeyIdentifierExtension);
  const keyId = ski?.keyId ?? (await x509.SubjectKeyIdentifierExtension.create(certificate.publicKey)).keyId;
  return { certificate, privateKey: await importSigningKey(keyPem), keyId };
}

/** A self-signed CA: basicConstraints CA:true (critical), keyUsage keyCertSign and cRLSign. */
export async function createCa(options: { commonName: string; notBefore: Date; notAfter: Date }): Promise<IssuedPair> {
  const { spki, keyPem } = newKeyPair();
  const signingKey = await importSigningKey(keyPem);
  const ski = await x509.SubjectKeyIdentifierExtension.create(spki);
  const serial = randomSerial();
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: serial,
    subject: `CN=${options.commonName}`,
    issuer: `CN=${options.commonName}`,
    notBefore: options.notBefore,
    notAfter: options.notAfter,
    publicKey: spki,
    signingKey,
    signingAlgorithm: ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      ski,
      new x509.AuthorityKeyIdentifierExtension(ski.keyId),
    ],
  });
  return { certificatePem: `${certificate.toString('pem')}\n`, keyPem, serial };
}

/** A leaf certificate signed by `ca`, for a client (clientAuth) or the broker (serverAuth and SAN). */
export async function issueCertificate(
  ca: SigningCa,
  options: { commonName: string; purpose: CertificatePurpose; notBefore: Date; notAfter: Date; serial?: string },
): Promise<IssuedPair> {
  const { spki, keyPem } = newKeyPair();
  const serial = options.serial ?? randomSerial();
  const { purpose } = options;
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyAgreement, true),
    new x509.ExtendedKeyUsageExtension([purpose.kind === 'server' ? SERVER_AUTH : CLIENT_AUTH]),
    await x509.SubjectKeyIdentifierExtension.create(spki),
    new x509.AuthorityKeyIdentifierExtension(ca.keyId),
  ];
  if (purpose.kind === 'server') {
    extensions.push(subjectAltNames(purpose.hosts));
  }
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: serial,
    subject: `CN=${options.commonName}`,
    issuer: ca.certificate.subject,
    notBefore: options.notBefore,
    notAfter: options.notAfter,
    publicKey: spki,
    signingKey: ca.privateKey,
    signingAlgorithm: ALGORITHM,
    extensions,
  });
  return { certificatePem: `${certificate.toString('pem')}\n`, keyPem, serial };
}

/** A CRL signed by `ca` listing `entries`, valid from `thisUpdate` to `nextUpdate`. */
export async function createCrl(
  ca: SigningCa,
  options: { entries: readonly { serial: string; revokedAt: Date }[]; thisUpdate: Date; nextUpdate: Date; number: number },
): Promise<string> {
  const crl = await x509.X509CrlGenerator.create({
    issuer: ca.certificate.subject,
    thisUpdate: options.thisUpdate,
    nextUpdate: options.nextUpdate,
    signingKey: ca.privateKey,
    signingAlgorithm: ALGORITHM,
    entries: options.entries.map((entry) => ({ serialNumber: entry.serial, revocationDate: entry.revokedAt, reason: x509.X509CrlReason.keyCompromise })),
    extensions: [new x509.AuthorityKeyIdentifierExtension(ca.keyId), new CrlNumberExtension(options.number)],
  });
  // OpenSSL reads only the label RFC 7468 section 5 gives a CRL, "X509 CRL".
  return `${x509.PemConverter.encode(crl.rawData, 'X509 CRL')}\n`;
}

/** cRLNumber (RFC 5280 section 5.2.3): a conforming CRL carries one. */
class CrlNumberExtension extends x509.Extension {
  constructor(value: number) {
    super(id_ce_cRLNumber, false, AsnConvert.serialize(new CRLNumber(value)));
  }
}

/** Whether the certificate's SAN names every host (compared as @peculiar/x509 encodes them). */
export function sanCovers(certificatePem: string, hosts: readonly string[]): boolean {
  const san = new x509.X509Certificate(certificatePem).getExtension(x509.SubjectAlternativeNameExtension);
  if (!san) return false;
  const named = new Set(san.names.toJSON().map((name) => `${name.type}:${name.value}`));
  return subjectAltNames(hosts).names.toJSON().every((name) => named.has(`${name.type}:${name.value}`));
}

function subjectAltNames(hosts: readonly string[]): x509.SubjectAlternativeNameExtension {
  return new x509.SubjectAlternativeNameExtension(hosts.map((host): x509.JsonGeneralName => ({ type: isIP(host) ? 'ip' : 'dns', value: host })));
}

/**
 * What a CRL says: whether `ca` signed it, when it must be replaced, and the serials it revokes
 * (hex, lower case).
 */
export async function readCrl(pem: string, ca: SigningCa): Promise<{ signedByCa: boolean; nextUpdate: Date | undefined; serials: string[] }> {
  const crl = new x509.X509Crl(pem);
  const signedByCa = crl.issuer === ca.certificate.subject && (await crl.verify({ publicKey: ca.certificate.publicKey }));
  return { signedByCa, nextUpdate: crl.nextUpdate, serials: crl.entries.map((entry) => entry.serialNumber.toLowerCase()) };
}
