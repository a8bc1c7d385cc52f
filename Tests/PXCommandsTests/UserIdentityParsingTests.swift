import ArgumentParser
import DICOMData
import Foundation
import PXCommandLine
import PXCore
import PXPlaces
import PXTestSupport
import Testing

/// The user identity options, config keys, the users file of --require-user and the redaction of the
/// password (issue 35), without a network.
@Suite(.timeLimit(.minutes(10))) struct UserIdentityParsingTests {
    @Test func configNodeKeys() throws {
        let config = try PXConfig(
            parsing: """
                [nodes.pacs]
                host = "pacs"
                port = 104
                ae_title = "PACS"
                user = "alice"
                password_env = "PX_TEST_UNSET_PASSWORD_VARIABLE"
                """)
        let node = try #require(config.nodes["pacs"])
        #expect(node.user == "alice")
        // The variable is not set: a usage error naming it, never an identity without its password.
        #expect(throws: PXError.self) { try node.password() }
        #expect(throws: PXError.self) {
            try PXConfig(parsing: "[nodes.x]\nhost = \"h\"\nport = 1\nae_title = \"A\"\npassword_file = \"/p\"\n")
        }
    }

    @Test func optionsBuildTheIdentity() throws {
        let options = try UserIdentityOptions.parse(["--user", "alice", "--password", "s3cret", "--pos-response"])
        let identity = try #require(try options.userIdentity(node: nil))
        #expect(identity.typeCode == 2 && identity.positiveResponseRequested)
        #expect(identity.primaryField == Array("alice".utf8) && identity.secondaryField == Array("s3cret".utf8))
        #expect(throws: (any Error).self) { try UserIdentityOptions.parse(["--password", "x"]) }
        #expect(throws: (any Error).self) { try UserIdentityOptions.parse(["--user", "a", "--jwt", "/f"]) }
        #expect(throws: PXError.self) { try UserIdentityOptions.parse(["--pos-response"]).userIdentity(node: nil) }
        #expect(throws: PXError.self) {
            try UserIdentityOptions.parse(["--jwt", "/nonexistent/token"]).userIdentity(node: nil)
        }
    }

    @Test func passwordIsRedacted() {
        let argv = ["px-echo", "pacs", "--user", "a", "--password", "s3cret", "--password=other", "--", "--password"]
        #expect(
            CommandOutput.redacted(argv)
                == ["px-echo", "pacs", "--user", "a", "--password", "***", "--password=***", "--", "--password"])
    }

    /// A line made by px verifies, and so does one made with Python's hashlib (the documented one-liner).
    @Test func usersFile() async throws {
        let line = try UserAccounts.line(username: "alice", password: "s3cret", salt: Array(0..<16))
        let python = try await PeerHarness.run(
            "/usr/bin/python3",
            [
                "-c",
                "import hashlib,sys; s=bytes(range(16)); print(sys.argv[1]+':sha256:'+s.hex()+':'+hashlib.sha256(s+sys.argv[2].encode()).hexdigest())",
                "alice", "s3cret",
            ])
        #expect(python.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == line)
        let accounts = try UserAccounts(parsing: "# users\n\n" + line + "\n", path: "users.txt")
        #expect(accounts.verify(username: "alice", password: Array("s3cret".utf8)))
        #expect(!accounts.verify(username: "alice", password: Array("s3cret ".utf8)))
        #expect(!accounts.verify(username: "bob", password: Array("s3cret".utf8)))
        #expect(throws: PXError.self) { try UserAccounts(parsing: "alice:md5:00:11\n", path: "users.txt") }
        #expect(throws: PXError.self) { try UserAccounts(parsing: "# nobody\n", path: "users.txt") }
    }
}
