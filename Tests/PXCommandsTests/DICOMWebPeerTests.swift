import ArgumentParser
import PX
import PXCommandLine
import PXCommands
import PXCore
import Testing

/// DICOMweb places on the command line and in the config file.
@Suite("DICOMweb peers", .timeLimit(.minutes(1)))
struct DICOMWebPeerTests {
    @Test("http(s) URLs parse as DICOMweb peers, other forms as before")
    func peerSpec() throws {
        #expect(try PeerSpec.parse("https://pacs.example/dicom-web") == .url("https://pacs.example/dicom-web"))
        #expect(try PeerSpec.parse("HTTP://127.0.0.1:8042/dicom-web") == .url("HTTP://127.0.0.1:8042/dicom-web"))
        #expect(try PeerSpec.parse("PACS@10.0.0.5:104") == .address(host: "10.0.0.5", port: 104, aeTitle: "PACS"))
        #expect(try PeerSpec.parse("pacs") == .node("pacs"))
    }

    @Test(
        "[nodes.x] url with auth: host and port from the URL, credentials from the named variable; a DIMSE node as before"
    )
    func configNodes() throws {
        let config = try PXConfig(
            parsing: """
                [nodes.cloud]
                url = "https://pacs.example:8443/dicom-web"
                auth = "basic"
                credentials_env = "PX_TEST_UNSET_VARIABLE_FOR_DICOMWEB"

                [nodes.pacs]
                host = "10.0.0.5"
                port = 104
                ae_title = "PACS"
                """)
        let cloud = try #require(config.nodes["cloud"])
        #expect(cloud.url == "https://pacs.example:8443/dicom-web")
        #expect(cloud.host == "pacs.example")
        #expect(cloud.port == 8443)
        // The variable is not set: a usage error naming it, never a request without credentials.
        #expect(throws: PXError.self) { try cloud.dicomWebPlace() }
        #expect(try config.nodes["pacs"]?.dicomWebPlace() == nil)
        #expect(throws: PXError.self) { try PXConfig(parsing: "[nodes.bad]\nurl = \"ftp://x/\"\n") }
    }

    @Test(
        "a URL peer resolves to a DICOMweb service (no AE title), chosen by type: WADO-RS retrieves side by side, study by study"
    )
    func webPeerResolution() throws {
        let config = try PXConfig(
            parsing: """
                [nodes.cloud]
                url = "http://127.0.0.1:8042/dicom-web"
                transfer_syntax = "1.2.840.10008.1.2.1"

                [nodes.pacs]
                host = "10.0.0.5"
                port = 104
                ae_title = "PACS"
                """)
        // A web node has no AE title (never a made-up one).
        #expect(config.nodes["cloud"]?.aeTitle == "")
        let url = try ConnectionOptions.parse(["https://pacs.example/dicom-web"])
        let service = try #require(try url.webService(config: config))
        #expect(service.place.baseURL == "https://pacs.example/dicom-web")
        #expect(service.transferSyntax == nil)
        // The config node by name, and its URL written out, are the same service with its transfer syntax.
        for peer in ["cloud", "http://127.0.0.1:8042/dicom-web"] {
            let node = try #require(try ConnectionOptions.parse([peer]).webService(config: config), "\(peer)")
            #expect(node.place.port == 8042)
            #expect(node.transferSyntax == "1.2.840.10008.1.2.1", "\(peer)")
        }
        for peer in ["pacs", "PACS@10.0.0.5:104", "10.0.0.5:104"] {
            #expect(try ConnectionOptions.parse([peer]).webService(config: config) == nil, "\(peer)")
        }

        // The capabilities the command layer asks for, instead of a tool name or a downcast: peers bound to where
        // they talk, a DICOMweb service with its own transactions' names, a DIMSE node its backend and connection.
        let web: any Querying & Retrieving = DICOMWebService(place: service.place)
        #expect(web.parallelRetrieval != nil)
        #expect(!web.retrievesWholePatients)
        #expect(web.queryOperation == "QIDO-RS")
        #expect(web.retrieveOperation == "WADO-RS")
        let native: any Querying & Retrieving = DIMSEPeer(
            backend: try PX.backend(.native, executables: [:], for: .get),
            connection: Connection(
                node: try DICOMNode(host: "10.0.0.5", port: 104, calledAETitle: "PACS"),
                local: try LocalAE(aeTitle: "PXSCU")))
        #expect(native.parallelRetrieval == nil)
        #expect(native.retrievesWholePatients)
        #expect(native.queryOperation == "C-FIND")
        #expect(native.retrieveOperation == "C-GET")
        // A DICOMweb peer is no DIMSE node: asking its options for a connection is a usage error.
        #expect(throws: PXError.self) { try url.connection(timeouts: .standard) }
    }
}
