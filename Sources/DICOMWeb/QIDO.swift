import AsyncHTTPClient
import DICOMData
import NIOHTTP1
import PXCore

/// QIDO-RS, the search transaction (PS3.18 §10.6).
extension DICOMWebClient {
    /// Matches per request when px pages through a large result (PS3.18 §8.3.4.4 `limit`/`offset`).
    public static let pageSize = 500

    /// The resource path and query parameters of a search for `request` (PS3.18 §10.6.1.2):
    /// matching keys with a value become `gggggeeee=value` (a UID list becomes a comma-separated
    /// list, §8.3.4.1), return keys without one become `includefield=gggggeeee` (§8.3.4.3).
    /// Wildcards `*` `?` and date/time ranges keep the syntax C-FIND uses (PS3.4 §C.2.2.2), which
    /// QIDO-RS shares. A single study (and series) UID goes into the path instead.
    ///
    /// - Throws: ``PXError/usage(_:)`` for the patient level, which QIDO-RS does not search.
    public static func searchTarget(_ request: FindRequest) throws(PXError) -> (path: String, query: [(String, String)])
    {
        let ids = request.identifier
        func single(_ tag: Tag) -> String? {
            guard let values = ids.strings(tag), values.count == 1, let value = values.first, !value.isEmpty,
                !value.contains("*"), !value.contains("?")
            else { return nil }
            return pathSegment(value)
        }
        var inPath: Set<Tag> = []
        var path: String
        switch request.level {
        case .patient:
            throw .usage("a DICOMweb peer has no patient-level search (QIDO-RS searches studies, series and instances)")
        case .study:
            path = "/studies"
        case .series:
            if let study = single(.studyInstanceUID) {
                path = "/studies/\(study)/series"
                inPath.insert(.studyInstanceUID)
            } else {
                path = "/series"
            }
        case .image:
            if let study = single(.studyInstanceUID) {
                inPath.insert(.studyInstanceUID)
                if let series = single(.seriesInstanceUID) {
                    path = "/studies/\(study)/series/\(series)/instances"
                    inPath.insert(.seriesInstanceUID)
                } else {
                    path = "/studies/\(study)/instances"
                }
            } else {
                path = "/instances"
            }
        }
        var query: [(String, String)] = []
        for element in ids where !inPath.contains(element.tag) {
            let tag = element.tag
            if tag == .queryRetrieveLevel || tag == .specificCharacterSet || tag.isGroupLength || element.vr == .SQ {
                continue
            }
            let values = element.stringValues(characterSet: ids.characterSet)
            if values.allSatisfy(\.isEmpty) {
                query.append(("includefield", tag.hexString))
            } else {
                query.append((tag.hexString, values.joined(separator: element.vr == .UI ? "," : "\\")))
            }
        }
        return (path, query)
    }

    /// Searches (PS3.18 §10.6), in pages of `pageSize` matches (`limit` and `offset`, PS3.18
    /// §8.3.4.4) until a page comes back short or `request.limit` matches arrived; `onMatch` sees
    /// each match as its page arrives.
    ///
    /// - Returns: the matches decoded from the DICOM JSON Model (PS3.18 §F.2).
    /// - Throws: ``PXError``.
    public func search(
        _ request: FindRequest, pageSize: Int = Self.pageSize, onMatch: (DataSet) async throws -> Void
    ) async throws -> [DataSet] {
        let target = try Self.searchTarget(request)
        let pageSize = max(1, pageSize)
        var matches: [DataSet] = []
        var previousFirst: String?
        var pages = 0
        while true {
            let wanted = request.limit.map { min(pageSize, $0 - matches.count) } ?? pageSize
            if wanted <= 0 { break }
            var query = target.query
            query.append(("limit", String(wanted)))
            if !matches.isEmpty { query.append(("offset", String(matches.count))) }
            let response = try await send(
                .GET, url(target.path, query: query), headers: [("Accept", "application/dicom+json")])
            if response.status.code == 204 { break }
            // A body that is not JSON (a WADO-RS endpoint answering a multipart, an HTML page) is
            // refused before any of it is read into memory.
            let contentType = response.headers.first(name: "content-type")?.lowercased() ?? ""
            guard contentType.isEmpty || contentType.contains("json") else {
                throw PXError.invalidResponse(
                    "QIDO-RS answer of type '\(contentType)', expected application/dicom+json (PS3.18 §10.6.3)")
            }
            let bytes = try await collect(response)
            let page = try Self.decodeDataSets(bytes)
            // A page that starts as the previous one did: the service ignores `offset`, and asking on
            // would never end.
            let first = page.first.map(Self.identity)
            if let first, first == previousFirst {
                throw PXError.invalidResponse(
                    "the QIDO-RS service ignores offset (PS3.18 §8.3.4.4): page \(pages + 1) repeats page \(pages)")
            }
            previousFirst = first
            pages += 1
            // With --limit, no more than asked for, whatever the service sent.
            for match in page.prefix(request.limit == nil ? page.count : wanted) {
                try await onMatch(match)
                matches.append(match)
            }
            // A short page is the last; a longer one than asked for means the service ignores `limit`
            // and sent all it has.
            if page.count != wanted { break }
        }
        return matches
    }

    /// A match's Study, Series and SOP Instance UIDs, as one text.
    static func identity(_ match: DataSet) -> String {
        [Tag.studyInstanceUID, .seriesInstanceUID, .sopInstanceUID].map { match.string($0) ?? "" }.joined(
            separator: "/")
    }

    /// The data sets of a DICOM JSON answer: an array of objects (an empty body is none).
    /// - Throws: ``PXError/invalidResponse(_:)``.
    static func decodeDataSets(_ bytes: [UInt8]) throws(PXError) -> [DataSet] {
        if bytes.allSatisfy({ $0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09 }) { return [] }
        do {
            let json = try JSONParser.parse(bytes)
            guard let array = json.arrayValue else {
                throw PXError.invalidResponse("QIDO-RS answer is not a JSON array")
            }
            var out: [DataSet] = []
            out.reserveCapacity(array.count)
            for object in array { out.append(try DataSet(dicomJSON: object)) }
            return out
        } catch let error as PXError {
            throw error
        } catch {
            throw .invalidResponse("QIDO-RS answer is not DICOM JSON (PS3.18 §F.2): \(error)")
        }
    }

    /// A QIDO-RS match shaped as the C-FIND response to the same identifier would be (PS3.4
    /// §C.2.2.1.2): exactly the keys asked for, in tag order, empty when the archive returned no
    /// value; QueryRetrieveLevel set; the archive's Specific Character Set kept. So px-find prints
    /// the same whichever protocol answered.
    public static func shapedAsFindResponse(_ match: DataSet, request: FindRequest) -> DataSet {
        var out = DataSet()
        if let charset = match[.specificCharacterSet] { out.set(charset) }
        for key in request.identifierWithLevel {
            if key.tag == .specificCharacterSet { continue }
            if key.tag == .queryRetrieveLevel {
                out.set(key)
            } else if let element = match[key.tag] {
                out.set(element)
            } else {
                out.set(DataElement(tag: key.tag, vr: key.vr, bytes: []))
            }
        }
        return out
    }
}
