import DICOMData
import PXCore
import Testing

@testable import DICOMWeb

/// QIDO-RS and WADO-RS URLs: query values and path segments percent-encoded as RFC 3986 §3.3/§3.4 and
/// PS3.18 §8.3.4 require.
@Suite("DICOMweb URL encoding")
struct QueryEncodingTests {
    @Test(
        "query values: ^, spaces, brackets, non-ASCII, & = + ; # % escaped; wildcards, UID-list commas, ranges kept",
        arguments: [
            ("Doe^John", "Doe%5EJohn"),
            ("Chest [PA] view", "Chest%20%5BPA%5D%20view"),
            ("Müller^Jürgen", "M%C3%BCller%5EJ%C3%BCrgen"),
            ("山田*", "%E5%B1%B1%E7%94%B0*"),
            ("PAT00?", "PAT00?"),
            ("A+B&C=D;E#F%G", "A%2BB%26C%3DD%3BE%23F%25G"),
            ("O'Brien*", "O'Brien*"),
            ("1.2.3,1.2.4", "1.2.3,1.2.4"),
            ("20240101-20241231", "20240101-20241231"),
            ("a\\b", "a%5Cb"),
        ])
    func queryValue(value: String, encoded: String) {
        #expect(DICOMWebClient.percentEncoded(value) == encoded)
    }

    @Test("a UID in the path cannot leave its segment: / ? # % are escaped")
    func pathSegments() throws {
        #expect(DICOMWebClient.pathSegment("1.2.840.10008.5.1") == "1.2.840.10008.5.1")
        #expect(DICOMWebClient.pathSegment("1.2/../../x?y#z") == "1.2%2F..%2F..%2Fx%3Fy%23z")
        let request = try GetRequest(
            studyInstanceUID: "1.2/3", seriesInstanceUID: "4?5", sopInstanceUIDs: ["6#7"], root: "/tmp/px")
        #expect(DICOMWebClient.retrievePaths(request) == ["/studies/1.2%2F3/series/4%3F5/instances/6%237"])
    }

    @Test("a search's URL: matching values encoded, return keys as includefield, the study UID in the path")
    func searchURL() throws {
        var keys = DataSet()
        keys.set(.studyInstanceUID, vr: .UI, string: "1.2.3")
        keys.set(.patientName, vr: .PN, string: "Doe^John")
        keys.set(DataElement(tag: .modality, vr: .CS, bytes: []))
        let target = try DICOMWebClient.searchTarget(FindRequest(level: .series, identifier: keys))
        #expect(target.path == "/studies/1.2.3/series")
        let place = try DICOMWebPlace(url: "http://127.0.0.1:8042/dicom-web/")
        #expect(
            DICOMWebClient.url(place.baseURL + target.path, query: target.query)
                == "http://127.0.0.1:8042/dicom-web/studies/1.2.3/series?includefield=00080060&00100010=Doe%5EJohn")
    }
}
