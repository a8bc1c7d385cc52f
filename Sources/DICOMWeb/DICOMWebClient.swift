import AsyncHTTPClient
import DICOMData
import Logging
import NIOCore
import NIOHTTP1
import PXCore

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// HTTP to one DICOMweb service (PS3.18 §8): every request with a deadline, connect and read
/// timeouts, the service's credentials, and bounded retries with backoff when it answers
/// 429 Too Many Requests or 503 Service Unavailable (and only then).
///
/// Errors are ``PXError``s: ``PXError/httpFailure(status:method:url:message:)`` with the archive's
/// message for an error status, a timeout, a refused connection or an unknown host otherwise.
public struct DICOMWebClient: Sendable {
    public let place: DICOMWebPlace
    public let timeouts: Timeouts
    let http: HTTPClient
    let logger: Logger
    /// Attempts per request when the service answers 429 or 503.
    public static let maximumAttempts = 4
    /// The longest wait between attempts, whatever Retry-After says.
    public static let maximumBackoff: Double = 30
    /// The most of an error or search answer px reads into memory.
    public static let maximumMessageBytes = 64 * 1024 * 1024

    init(place: DICOMWebPlace, timeouts: Timeouts, http: HTTPClient, logger: Logger) {
        self.place = place
        self.timeouts = timeouts
        self.http = http
        self.logger = logger
    }

    /// Runs `body` with a client for `place`, shut down afterwards.
    public static func with<T: Sendable>(
        _ place: DICOMWebPlace, timeouts: Timeouts, logger: Logger, _ body: (DICOMWebClient) async throws -> T
    ) async throws -> T {
        var configuration = HTTPClient.Configuration()
        // The read timeout restarts with each byte: AnswerGuard bounds the rest (deadline, transfer rate).
        configuration.timeout = .init(connect: amount(timeouts.connect), read: amount(timeouts.dimse))
        // A redirect to another host would carry the credentials there.
        configuration.redirectConfiguration = .disallow
        // A refused connection is an answer, not something to retry until the connect timeout (the
        // client's default); retries are px's own, on 429/503 only.
        configuration.connectionPool.retryConnectionEstablishment = false
        let http = HTTPClient(eventLoopGroup: HTTPClient.defaultEventLoopGroup, configuration: configuration)
        let client = DICOMWebClient(place: place, timeouts: timeouts, http: http, logger: logger)
        let result: Result<T, any Error>
        do {
            result = .success(try await body(client))
        } catch {
            result = .failure(error)
        }
        do {
            try await http.shutdown()
        } catch {
            logger.debug("HTTP client shutdown: \(error)")
        }
        return try result.get()
    }

    static func amount(_ seconds: Double) -> TimeAmount { .milliseconds(Int64((seconds * 1000).rounded())) }

    /// `base + path` with the query items percent-encoded (RFC 3986 §3.4).
    func url(_ path: String, query: [(String, String)] = []) -> String {
        Self.url(place.baseURL + path, query: query)
    }

    /// `address` with the query items percent-encoded (RFC 3986 §3.4).
    static func url(_ address: String, query: [(String, String)]) -> String {
        var text = address
        for (i, item) in query.enumerated() {
            text += (i == 0 ? "?" : "&") + percentEncoded(item.0) + "=" + percentEncoded(item.1)
        }
        return text
    }

    /// Percent-encodes a query parameter's name or value (RFC 3986 §3.4, §2.1; PS3.18 §8.3.4): UTF-8,
    /// every byte that is not unreserved or one of `!$'()*,:@/?` as `%XX`. So `^`, spaces, `[ ]`, `%`,
    /// controls and non-ASCII are encoded, and so are `& = + ; #`, which a query string gives a
    /// meaning to (`+` reads as a space in form decoding). The wildcards `*` `?`, the `,` of UID lists
    /// and the `-` of ranges go as they are: they are legal in a query and mean the same either way.
    ///
    /// Orthanc 1.10's DICOMweb plugin (1.7) compares query values without percent-decoding them: a
    /// value that needs an escape (a PN with `^`, a description with a space, non-ASCII text) matches
    /// nothing there, while a DIMSE C-FIND of the same value does (a defect of that server, not of
    /// the URL; `Doe*` rather than `Doe^John` works with it).
    static func percentEncoded(_ text: String) -> String {
        percentEncoded(text, keeping: queryLiterals)
    }

    /// Percent-encodes one path segment (RFC 3986 §3.3: pchar), such as a UID in
    /// `/studies/{uid}`: a value with `/`, `?` or `#` cannot reach another resource.
    static func pathSegment(_ text: String) -> String {
        percentEncoded(text, keeping: pathLiterals)
    }

    /// The sub-delimiters and `:@/?` left as they are in a query (RFC 3986 §3.4), but for `&=+;`.
    static let queryLiterals = Set("-._~!$'()*,:@/?".utf8)
    /// pchar's sub-delimiters, `:` and `@` (RFC 3986 §3.3).
    static let pathLiterals = Set("-._~!$&'()*+,;=:@".utf8)

    static func percentEncoded(_ text: String, keeping literal: Set<UInt8>) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for b in text.utf8 {
            switch b {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                out.append(b)
            case _ where literal.contains(b):
                out.append(b)
            default:
                out += [UInt8(ascii: "%"), hex[Int(b >> 4)], hex[Int(b & 0xF)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// An answer whose status was accepted, its body not read yet, and the limits to read it under.
    struct Answer: Sendable {
        var response: HTTPClientResponse
        var limits: AnswerGuard
        var status: HTTPResponseStatus { response.status }
        var headers: HTTPHeaders { response.headers }
    }

    /// Sends one request under ``timeouts`` (``AnswerGuard``); returns the answer when its status is in
    /// `accepting`. The deadline covers every attempt and the answer's body.
    ///
    /// - Parameter body: makes the request body, again for each attempt.
    /// - Throws: ``PXError``.
    func request(
        _ method: HTTPMethod, _ url: String, headers: [(String, String)] = [], accepting: Set<Int> = Set(200..<300),
        body: (() throws -> HTTPClientRequest.Body)? = nil
    ) async throws -> Answer {
        let limits = AnswerGuard(timeouts: timeouts, url: url)
        var attempt = 1
        var resent = false
        while true {
            var request = HTTPClientRequest(url: url)
            request.method = method
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            if let authorization = place.authorization {
                request.headers.add(name: "Authorization", value: authorization)
            }
            if let body { request.body = try body() }
            logger.debug("DICOMweb \(method.rawValue) \(url) (attempt \(attempt))")
            let response: HTTPClientResponse
            do {
                response = try await http.execute(request, deadline: headDeadline(limits), logger: logger)
            } catch {
                // A kept-alive connection the server closed as the request went out (an idle timeout
                // racing the request): no answer came, so an idempotent request is sent again once, on a new
                // connection (RFC 9110 §9.2.2). A POST (STOW-RS) is not: the archive may have stored it.
                if !resent && (method == .GET || method == .HEAD) && Self.endedBeforeAnswer(error) {
                    resent = true
                    logger.debug(
                        "DICOMweb \(method.rawValue) \(url): the connection closed before an answer; sent again")
                    continue
                }
                throw mapped(error)
            }
            let status = Int(response.status.code)
            if accepting.contains(status) { return Answer(response: response, limits: limits) }
            let message = await message(of: response, limits: limits)
            if (status == 429 || status == 503) && attempt < Self.maximumAttempts {
                let wait = Self.backoff(attempt: attempt, retryAfter: response.headers.first(name: "retry-after"))
                if let deadline = limits.deadline, ContinuousClock.now + AnswerGuard.duration(wait) >= deadline {
                    throw PXError.timeout("deadline", seconds: timeouts.deadline, detail: url)
                }
                logger.info(
                    "DICOMweb \(method.rawValue) \(url) answered \(status); retrying in \(Timeouts.format(wait)) s")
                try await Task.sleep(for: .milliseconds(Int64(wait * 1000)))
                attempt += 1
                continue
            }
            throw PXError.httpFailure(status: status, method: method.rawValue, url: url, message: message)
        }
    }

    /// How long px waits for a response head: the request's deadline. (The read timeout bounds each
    /// silence before it too: async-http-client restarts it for each parsed part of the answer, not
    /// for each byte, so a head sent a byte at a time still ends at ``Timeouts/dimse``.)
    func headDeadline(_ limits: AnswerGuard) -> NIODeadline {
        limits.deadline.map { NIODeadline.now() + .nanoseconds(Self.nanoseconds($0 - ContinuousClock.now)) }
            ?? .distantFuture
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return max(0, seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }

    /// Exponential backoff (0.5, 1, 2 s, ...), or the server's Retry-After seconds (RFC 9110
    /// §10.2.3), at most ``maximumBackoff``.
    static func backoff(attempt: Int, retryAfter: String?) -> Double {
        if let retryAfter, let seconds = Double(retryAfter.trimmingCharacters(in: " ")), seconds >= 0 {
            return min(seconds, maximumBackoff)
        }
        return min(0.5 * Double(1 << min(attempt - 1, 10)), maximumBackoff)
    }

    /// The archive's explanation in an error answer: the `Message`/`Details` of a JSON body (as
    /// Orthanc sends), else the first line of a text body; at most 64 KiB are read, under `limits`.
    func message(of response: HTTPClientResponse, limits: AnswerGuard) async -> String? {
        var bytes: [UInt8] = []
        do {
            try await limits.stream(response) { chunk in
                bytes += chunk.readableBytesView.prefix(64 * 1024 - bytes.count)
                return bytes.count < 64 * 1024
            }
        } catch {
            // The answer broke off or dragged: what arrived is all there is to show.
        }
        return Self.message(bytes, reasonPhrase: response.status.reasonPhrase)
    }

    /// The explanation in the first bytes of an error answer.
    static func message(_ bytes: [UInt8], reasonPhrase: String) -> String? {
        guard !bytes.isEmpty else { return reasonPhrase }
        do {
            if let object = try JSONParser.parse(bytes).objectValue {
                let texts = ["Message", "Details", "message", "error"].compactMap { key in
                    object.first { $0.key == key }?.value.stringValue
                }
                if !texts.isEmpty { return texts.joined(separator: ": ") }
            }
        } catch {
            // Not JSON: the text itself.
        }
        let line = bytes.prefix { $0 != 0x0A && $0 != 0x0D }.prefix(500)
        return String(decoding: line, as: UTF8.self)
    }

    /// Whether `error` says the connection closed before any answer to the request came.
    static func endedBeforeAnswer(_ error: any Error) -> Bool {
        if let channel = error as? ChannelError {
            return channel == .ioOnClosedChannel || channel == .outputClosed || channel == .eof
        }
        if let http = error as? HTTPClientError { return http == .remoteConnectionClosed }
        return false
    }

    /// A transport error as a ``PXError``.
    func mapped(_ error: any Error) -> PXError {
        if let px = error as? PXError { return px }
        if let http = error as? HTTPClientError {
            switch http {
            case .connectTimeout, .tlsHandshakeTimeout:
                return .timeout("connect", seconds: timeouts.connect, detail: place.baseURL)
            case .readTimeout: return .timeout("read", seconds: timeouts.dimse, detail: place.baseURL)
            case .deadlineExceeded: return .timeout("deadline", seconds: timeouts.deadline, detail: place.baseURL)
            case .remoteConnectionClosed: return .aborted("\(place.baseURL) closed the connection")
            case .invalidURL, .emptyHost, .emptyScheme: return .usage("bad DICOMweb URL: \(place.baseURL)")
            default: return .io("DICOMweb \(place.baseURL): \(http)")
            }
        }
        let text = "\(error)"
        if text.contains("ECONNREFUSED") || text.contains("Connection refused") || text.contains("connection refused") {
            return .connectionRefused(host: place.host, port: place.port)
        }
        if text.contains("dnsA") || text.contains("NXDOMAIN") || text.contains("unknown host")
            || text.contains("Name or service")
        {
            return .unknownHost(place.host)
        }
        return .io("DICOMweb \(place.baseURL): \(text)")
    }

    /// Reads a whole (small) body under the answer's limits.
    /// - Throws: ``PXError/invalidResponse(_:)`` past ``maximumMessageBytes``, ``PXError/timeout(_:seconds:detail:)``.
    func collect(_ answer: Answer) async throws -> [UInt8] {
        var bytes: [UInt8] = []
        do {
            try await answer.limits.stream(answer.response) { chunk in
                guard bytes.count + chunk.readableBytes <= Self.maximumMessageBytes else {
                    throw PXError.invalidResponse("DICOMweb answer larger than \(Self.maximumMessageBytes) bytes")
                }
                bytes += chunk.readableBytesView
                return true
            }
        } catch {
            throw mapped(error)
        }
        return bytes
    }
}
