import DICOMProtocol
import NIOCore

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension AssociationConnection {
    /// How much of a file one `pread(2)` takes: whole PDV fragments, about 1 MiB.
    static let streamingReadSize = 1 << 20

    /// Sends one DIMSE message whose data set is `length` bytes of an open file starting at `offset`
    /// (PS3.7 §9.3.1, PS3.8 §9.3.5, Annex E).
    ///
    /// The data set is never held whole in memory: each `pread(2)` fills a fresh ByteBuffer with about
    /// 1 MiB, which is sliced (zero-copy) into PDV fragments of the peer's maximum length, one PDV per
    /// P-DATA-TF. The writes wait on the channel's back pressure, so memory stays at a few chunks
    /// whatever the file size. Each write waits at most `timeout` for the peer to read (the DIMSE timeout).
    func send(
        _ message: DIMSEMessage, presentationContextID: UInt8, dataSetOf descriptor: Int32, offset: Int, length: Int,
        path: String, timeout: TimeAmount?
    ) async throws {
        guard let negotiated = self.negotiated else {
            throw DICOMNetworkError.protocolError("no association established")
        }
        let command = message.commandSet.encoded(allocator: self.channel.allocator)
        let commandFragments = try PDataFragmenter(
            presentationContextID: presentationContextID, command: command, dataset: nil,
            peerMaximumPDULength: negotiated.peerMaximumPDULength)
        let fragmentLength = commandFragments.fragmentLength
        var pdus: [PDU] = []
        for data in commandFragments { pdus.append(try self.admit(data, sending: "\(message.commandField)")) }
        try await self.write(contentsOf: pdus, timeout: timeout, waitingFor: "the peer reading the C-STORE data set")

        if length == 0 {
            let empty = DataTF(PDV(presentationContextID: presentationContextID, messageControlHeader: .dataLast, data: ByteBuffer()))
            try await self.write(
                contentsOf: [try self.admit(empty, sending: "a data set")], timeout: timeout,
                waitingFor: "the peer reading the C-STORE data set")
            return
        }
        let chunk = max(fragmentLength, min(Self.streamingReadSize, Int(Int32.max)) / fragmentLength * fragmentLength)
        var position = offset
        var remaining = length
        while remaining > 0 {
            let want = min(chunk, remaining)
            var buffer = self.channel.allocator.buffer(capacity: want)
            try buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: want) { raw in
                var done = 0
                while done < want {
                    let n = pread(descriptor, raw.baseAddress! + done, want - done, off_t(position + done))
                    if n < 0 && errno == EINTR { continue }
                    if n < 0 { throw DICOMNetworkError.fileError("cannot read \(path): errno \(errno)") }
                    if n == 0 { throw DICOMNetworkError.fileError("\(path) ended early (it changed while being sent)") }
                    done += n
                }
                return done
            }
            position += want
            remaining -= want
            pdus.removeAll(keepingCapacity: true)
            while buffer.readableBytes > 0 {
                let fragment = buffer.readSlice(length: min(fragmentLength, buffer.readableBytes))!
                let header = PDV.MessageControlHeader(isCommand: false, isLastFragment: remaining == 0 && buffer.readableBytes == 0)
                let data = DataTF(PDV(presentationContextID: presentationContextID, messageControlHeader: header, data: fragment))
                pdus.append(try self.admit(data, sending: "a data set"))
            }
            try await self.write(contentsOf: pdus, timeout: timeout, waitingFor: "the peer reading the C-STORE data set")
        }
    }
}
