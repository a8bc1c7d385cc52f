import Foundation

extension TestSupport {
    /// The certificates made by scripts/make-test-certs.sh (OpenSSL) for the DICOM TLS tests.
    public struct TestCertificates: Sendable {
        public let directory: String
        /// `directory/NAME.pem` (`ca`, `server`, `client`, `expired`, `other-ca`, `other`).
        public func pem(_ name: String) -> String { directory + "/" + name + ".pem" }
        /// `directory/NAME.key`.
        public func key(_ name: String) -> String { directory + "/" + name + ".key" }
    }

    /// Makes a test CA, a server certificate for localhost and 127.0.0.1, a client certificate, an expired
    /// certificate and one from another CA in `directory`.
    public static func makeCertificates(in directory: String) async throws -> TestCertificates {
        let result = try await run("bash", [repositoryRoot + "/scripts/make-test-certs.sh", directory])
        guard result.status == 0 else { throw TestSupport.Failure("make-test-certs.sh: \(result.output)") }
        return TestCertificates(directory: directory)
    }
}
