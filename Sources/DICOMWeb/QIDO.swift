import AsyncHTTPClient
import DICOMData
import NIOCore
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
    /// - Throws: ``PXError/usage(_:)`` for the patient level, which QIDO-RS does not search, and for the
    ///   Modality Worklist model.
    public static func searchTarget(_ request: FindRequest) throws(PXError) -> (path: String, query: [(String, String)])
    {
        let ids = request.identifier
        func single(_ tag: Tag) -> String? {
            guard let values = ids.strings(tag), values.count == 1, let value = values.first, !value.isEmpty,
                !value.contains("*"), !value.contains("?")
            else { return nil }
            return pathSegment(value)
        }
        if request.model == .worklist {
            throw .usage("a DICOMweb peer has no Modality Worklist search: --model worklist needs a DIMSE peer")
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

    /// Searches (PS3.18 §10.6) and collects every match (see ``forEachMatch(_:pageSize:onMatch:)``).
    ///
    /// - Returns: the matches decoded from the DICOM JSON Model (PS3.18 §F.2).
    /// - Throws: ``PXError``.
    public func search(
        _ request: FindRequest, pageSize: Int = Self.pageSize, onMatch: (DataSet) async throws -> Void
    ) async throws -> [DataSet] {
        var matches: [DataSet] = []
        _ = try await forEachMatch(request, pageSize: pageSize) { match in
            try await onMatch(match)
            matches.append(match)
        }
        return matches
    }

    /// Searches (PS3.18 §10.6), in pages of `pageSize` matches (`limit` and `offset`, PS3.18
    /// §8.3.4.4) until a page comes back short or `request.limit` matches arrived; `onMatch` sees
    /// each match as it is read.
    ///
    /// Each page is read as a stream (``JSONArrayReader``): one match at a time is in memory, whatever
    /// the size of the page. The bounds hold whatever the service does with `limit` and `offset`: past
    /// `request.limit` matches the answer is no longer read, and past `request.maxResponses` the search
    /// fails with ``PXError/tooManyResponses(limit:)`` (the connection is closed, as a C-FIND is
    /// cancelled).
    ///
    /// - Returns: how many matches `onMatch` saw.
    /// - Throws: ``PXError``.
    public func forEachMatch(
        _ request: FindRequest, pageSize: Int = Self.pageSize, onMatch: (DataSet) async throws -> Void
    ) async throws -> Int {
        let target = try Self.searchTarget(request)
        let pageSize = max(1, pageSize)
        var count = 0
        var previousFirst: String?
        var pages = 0
        while true {
            let wanted = request.limit.map { min(pageSize, $0 - count) } ?? pageSize
            if wanted <= 0 { break }
            var query = target.query
            query.append(("limit", String(wanted)))
            if count > 0 { query.append(("offset", String(count))) }
            let address = url(target.path, query: query)
            let answer = try await self.request(.GET, address, headers: [("Accept", "application/dicom+json")])
            if answer.status.code == 204 { break }
            // A body that is not JSON (a WADO-RS endpoint answering a multipart, an HTML page) is
            // refused before any of it is read.
            let contentType = answer.headers.first(name: "content-type")?.lowercased() ?? ""
            guard contentType.isEmpty || contentType.contains("json") else {
                throw PXError.invalidResponse(
                    "QIDO-RS answer of type '\(contentType)', expected application/dicom+json (PS3.18 §10.6.3)")
            }
            var reader = JSONArrayReader()
            var inPage = 0
            var reachedLimit = false
            do {
                try await answer.limits.stream(answer.response) { chunk in
                    var decoded: [DataSet] = []
                    try chunk.withUnsafeReadableBytes { raw in
                        try reader.feed(raw) { object in decoded.append(try Self.decodeMatch(object)) }
                    }
                    for match in decoded {
                        if inPage == 0 {
                            // A page that starts as the previous one did: the service ignores `offset`, and
                            // asking on would never end.
                            let first = Self.identity(match)
                            if first == previousFirst {
                                throw PXError.invalidResponse(
                                    "the QIDO-RS service ignores offset (PS3.18 §8.3.4.4): page \(pages + 1) repeats page \(pages)"
                                )
                            }
                            previousFirst = first
                        }
                        inPage += 1
                        if let limit = request.limit, count >= limit {
                            reachedLimit = true
                            return false
                        }
                        if let bound = request.maxResponses, count >= bound {
                            throw PXError.tooManyResponses(limit: bound)
                        }
                        try await onMatch(match)
                        count += 1
                    }
                    return true
                }
                if !reachedLimit { try reader.finish() }
            } catch {
                throw mapped(error)
            }
            pages += 1
            // A short page is the last; a longer one than asked for means the service ignores `limit`
            // and sent all it has (or more than --limit, which was not read).
            if reachedLimit || inPage != wanted { break }
        }
        return count
    }

    /// One match of a QIDO-RS answer, from its JSON object's bytes.
    /// - Throws: ``PXError/invalidResponse(_:)``.
    static func decodeMatch(_ bytes: [UInt8]) throws(PXError) -> DataSet {
        do {
            return try DataSet(dicomJSON: try JSONParser.parse(bytes))
        } catch {
            throw .invalidResponse("QIDO-RS answer is not DICOM JSON (PS3.18 §F.2): \(error)")
        }
    }

    /// A match's Study, Series and SOP Instance UIDs, as one text.
    static func identity(_ match: DataSet) -> String {
        [Tag.studyInstanceUID, .seriesInstanceUID, .sopInstanceUID].map { match.string($0) ?? "" }.joined(
            separator: "/")
    }

    /// A QIDO-RS match shaped as the C-FIND response to the same identifier would be
    /// (``FindRequest/shapedResponse(_:)``, PS3.4 §C.2.2.1.2): exactly the keys asked for, so px-find prints
    /// the same whichever protocol answered.
    public static func shapedAsFindResponse(_ match: DataSet, request: FindRequest) -> DataSet {
        request.shapedResponse(match)
    }
}
